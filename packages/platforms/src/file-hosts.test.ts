import { describe, expect, it } from 'vitest';
import { checkFileUrl, discordFileHosts, isPrivateAddress, slackFileHosts, telegramFileHosts } from './file-hosts.ts';

describe('checkFileUrl', () => {
  it('lets a Slack file on files.slack.com carry the token, and refuses any other host', () => {
    const hosts = slackFileHosts('https://slack.com/api/');
    expect(checkFileUrl(hosts, 'https://files.slack.com/files-pri/T1-F1/download/a.png')).toMatchObject({ ok: true, credential: true });
    expect(checkFileUrl(hosts, 'https://evil.example/files-pri/x')).toMatchObject({ ok: false });
    expect(checkFileUrl(hosts, 'http://files.slack.com/x')).toMatchObject({ ok: false });
    expect(checkFileUrl(hosts, 'https://files.slack.com.evil.example/x')).toMatchObject({ ok: false });
    expect(checkFileUrl(hosts, 'https://user:pw@files.slack.com/x')).toMatchObject({ ok: false });
    expect(checkFileUrl(hosts, 'file:///etc/passwd')).toMatchObject({ ok: false });
  });

  it('adds the configured API origin only when it is not the platform\'s own (a simulator or proxy)', () => {
    const sim = slackFileHosts('http://127.0.0.1:4010/api/');
    expect(checkFileUrl(sim, 'http://127.0.0.1:4010/slack-files/F1/a.png')).toMatchObject({ ok: true, credential: true });
    expect(checkFileUrl(sim, 'http://127.0.0.1:4011/slack-files/F1/a.png')).toMatchObject({ ok: false });
    expect(sim.operatorHosts.has('127.0.0.1')).toBe(true);
    expect(slackFileHosts('https://slack.com/api/').operatorHosts.size).toBe(0);
  });

  it('resolves a redirect against the URL it came from and checks the result', () => {
    const hosts = discordFileHosts('https://discord.com/api');
    expect(checkFileUrl(hosts, '/attachments/1/2/a.png', 'https://cdn.discordapp.com/attachments/1/2/b.png')).toMatchObject({ ok: true, credential: false });
    expect(checkFileUrl(hosts, 'https://169.254.169.254/latest/meta-data', 'https://cdn.discordapp.com/x')).toMatchObject({ ok: false });
  });

  it('never gives Discord\'s or an unknown host a credential, and Telegram only its API root', () => {
    expect(checkFileUrl(discordFileHosts('https://discord.com/api'), 'https://media.discordapp.net/x')).toMatchObject({ ok: true, credential: false });
    const telegram = telegramFileHosts('https://api.telegram.org');
    expect(checkFileUrl(telegram, 'https://api.telegram.org/file/bot1:x/photos/a.jpg')).toMatchObject({ ok: true, credential: true });
    expect(checkFileUrl(telegram, 'https://example.org/file/bot1:x/photos/a.jpg')).toMatchObject({ ok: false });
  });
});

describe('isPrivateAddress', () => {
  it('flags loopback, private, link-local, shared and unspecified addresses, IPv4-mapped ones too', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPrivateAddress(address), address).toBe(true);
    }
    for (const address of ['1.1.1.1', '151.101.1.1', '2606:4700::1111', '::ffff:8.8.8.8']) expect(isPrivateAddress(address), address).toBe(false);
  });
});
