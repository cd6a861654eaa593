/** Server-sent events of a whole response body: each block's event name and its data lines joined. */
export function parseSse(text: string) {
  return text
    .split('\n\n')
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const id = /^id: (.*)$/m.exec(block)?.[1];
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
      return { event, data, ...(id !== undefined ? { id } : {}) };
    });
}
