/**
 * API-only context: sent to the model for one request, never
 * stored, never summarised, never shown as something the user said.
 */
export const apiOnlyNotes = {
  recovery:
    'Note from the chat gateway (not from the user): the previous turn was interrupted before you read the results of its last tool calls. ' +
    "Those results are above; treat them as possibly stale. The user's new message below comes first: answer it.",
  resume:
    'Note from the chat gateway (not from the user): your previous turn was cut off by a restart before it finished. ' +
    'Do not blindly re-run tools or actions from it that may already have taken effect; check first, or ask the user.',
} as const;
