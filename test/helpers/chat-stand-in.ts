import { createServer, type Server } from 'node:http';

/** What an OpenAI-compatible chat completions request sends: the messages, and the tools it offers. */
export interface SentChat {
  messages: Array<{ role: string; content: string | null }>;
  tools?: Array<{ function: { name: string } }>;
}

/** What the stand-in answers: a text, or one tool call. */
export type StandInAnswer = { text: string } | { call: { id: string; name: string; arguments?: Record<string, unknown> } };

/**
 * An OpenAI-compatible chat completions server for tests (a paid model faked at the wire, in the
 * recorded response's shape): `answer` decides each reply from what was sent. Listen on it, then
 * hand it to `modelsWithStandIn`.
 */
export function chatStandIn(answer: (sent: SentChat) => StandInAnswer): Server {
  return createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const answered = answer(JSON.parse(raw) as SentChat);
      const message =
        'call' in answered
          ? { role: 'assistant', content: null, tool_calls: [{ id: answered.call.id, type: 'function', function: { name: answered.call.name, arguments: JSON.stringify(answered.call.arguments ?? {}) } }] }
          : { role: 'assistant', content: answered.text };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: 'c', object: 'chat.completion', created: 1764115200, model: 'gpt-4o', choices: [{ index: 0, message, finish_reason: 'call' in answered ? 'tool_calls' : 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }),
      );
    });
  });
}
