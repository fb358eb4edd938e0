// Registers Switchboard's chat commands as Discord slash commands for the
// application (global commands; Discord may take a while to show changes).
//   DISCORD_BOT_TOKEN=… DISCORD_APPLICATION_ID=… npx tsx scripts/register-discord-commands.ts
// DISCORD_API_URL points it elsewhere (the simulator accepts the list and forgets it).
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import { busyInputModes } from '@switchboard/core';

const token = process.env.DISCORD_BOT_TOKEN;
const applicationId = process.env.DISCORD_APPLICATION_ID;
if (!token || !applicationId) {
  console.error('DISCORD_BOT_TOKEN and DISCORD_APPLICATION_ID are required');
  process.exit(1);
}

/** Chat input commands; option type 3 is a string. The worker reads them as `/<name> <values>`. */
const commands = [
  { name: 'new', description: 'Start a fresh session' },
  { name: 'reset', description: 'Start a fresh session' },
  { name: 'stop', description: 'Stop what the assistant is doing' },
  { name: 'status', description: 'Session, message count, token estimate, busy mode' },
  {
    name: 'busy',
    description: 'What happens when you write while the assistant is working',
    options: [{ type: 3, name: 'mode', description: 'The busy mode', required: false, choices: busyInputModes.map((mode) => ({ name: mode, value: mode })) }],
  },
  { name: 'compact', description: 'Summarise older messages now' },
  {
    name: 'approve',
    description: 'Approve what the assistant asked to do (the question’s buttons do the same)',
    options: [{ type: 3, name: 'scope', description: 'session: approve the same kind of action for the rest of the session', required: false, choices: [{ name: 'session', value: 'session' }] }],
  },
  { name: 'deny', description: 'Refuse what the assistant asked to do' },
  {
    name: 'schedules',
    description: 'What is scheduled in this conversation',
    // Subcommands reach the worker by name: `/schedules list`, `/schedules cancel <id>` (option type 1 a subcommand, 4 an integer).
    options: [
      { type: 1, name: 'list', description: 'List the active schedules (each with a Cancel button)' },
      { type: 1, name: 'cancel', description: 'Cancel one schedule', options: [{ type: 4, name: 'id', description: 'The schedule’s number, as listed', required: true, min_value: 1 }] },
    ],
  },
  { name: 'help', description: 'List the commands' },
];

const rest = new REST({ api: process.env.DISCORD_API_URL ?? 'https://discord.com/api', version: '10' }).setToken(token);
const registered = (await rest.put(Routes.applicationCommands(applicationId), { body: commands })) as { name: string }[];
console.log(`registered ${registered.length} commands: ${registered.map((command) => `/${command.name}`).join(' ')}`);
