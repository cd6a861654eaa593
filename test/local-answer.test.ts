import { describe, expect, it } from 'vitest';
import { apiName, questionKind, sentencesOf, unitsOf } from '../shared/models/local-answer';
import { localAnswer } from '../shared/models/local-engine';
import { analyze } from '../shared/search/analyzer';
import { chunkBlocks } from '../shared/search/chunker';
import { extractMarkdown } from '../shared/search/extract';

/** The built-in engine reading documentation: units, question kinds, and the replies it composes. */
const ask = (question: string, passages: Array<{ title: string; text: string }>) => localAnswer({ model: 'x', now: Date.now(), messages: [{ role: 'user', content: question }], passages, temperature: 0, maxTokens: 1024 });

/** A documentation page as search would hand it to the engine: extracted and chunked. */
function passagesOf(markdown: string) {
  const { title, blocks } = extractMarkdown(markdown);
  return chunkBlocks(title, blocks).map((c) => ({ title: c.title, text: c.text }));
}

const SERVER_DOC = `---
sidebar: server
---
# Server

<a id="factory"></a>
## Factory

[![CI](https://ci.example/badge.svg)](https://ci.example)

### bodyLimit
<a id="factory-body-limit"></a>

Default: \`1048576\` (1MiB)

Defines the maximum payload, in bytes, the server is allowed to accept. The
default body reader sends [FST_ERR_CTP_BODY_TOO_LARGE](./Errors.md) when the
payload exceeds it.

\`\`\`js
const fastify = require('fastify')({ bodyLimit: 1024 })

fastify.post('/', handler)
\`\`\`

## Reply

### .header(key, value)

Sets a response header. Call \`reply.send()\` after it, e.g. in a handler.

\`\`\`js
reply.header('x-powered-by', 'cairn')
\`\`\`

| Option | Default | Description |
| --- | --- | --- |
| \`compress\` | \`false\` | Whether replies are gzipped. |
`;

describe('reading documentation', () => {
  it('extracts Markdown without its noise: front matter, anchors, badges; code fenced with its language; tables a row a line, the rule kept', () => {
    const { blocks } = extractMarkdown(SERVER_DOC);
    const text = blocks.map((b) => b.text).join('\n\n');
    expect(text).not.toMatch(/sidebar|<a id|badge|\]\(/);
    expect(blocks.find((b) => b.text.startsWith('```'))?.text).toBe("```js\nconst fastify = require('fastify')({ bodyLimit: 1024 })\n\nfastify.post('/', handler)\n```");
    expect(blocks.find((b) => b.text.startsWith('| Option'))?.text.split('\n')).toEqual(['| Option | Default | Description |', '| --- |', '| `compress` | `false` | Whether replies are gzipped. |']);
  });

  it('keeps an autolink’s address (it is not a tag)', () => {
    const { blocks } = extractMarkdown('# Docs\n\nThe API reference is served at <http://localhost:3000/v1/docs>; write to <help@example.com>. <span>Tags</span> go.');
    expect(blocks[0]!.text).toBe('The API reference is served at http://localhost:3000/v1/docs; write to help@example.com. Tags go.');
  });

  it('splits sentences at sentence ends only: inline code, e.g. and lower-case continuations stay whole', () => {
    expect(sentencesOf('Call `fastify.listen()` to start. It returns a promise, e.g. for await. Done')).toEqual(['Call `fastify.listen()` to start.', 'It returns a promise, e.g. for await.', 'Done']);
  });

  it('reads a passage as units: whole code blocks, table rows (named by the header above the rule), sentences; code cut off by the chunk is not quoted', () => {
    const units = unitsOf('const half = 1\n```\n\nTo start, call it. Then wait.\n\n```js\nrun()\n\nstop()\n```\n\n| Name | Default |\n| --- |\n| a | b |\n| c | |\n\n| e | f |\n| g | h |\n\n```text\ncut off', 0);
    expect(units.map((u) => [u.kind, u.text])).toEqual([
      ['sentence', 'To start, call it.'],
      ['sentence', 'Then wait.'],
      ['code', '```js\nrun()\n\nstop()\n```'],
      ['sentence', 'Name: a; Default: b.'],
      ['sentence', 'Name: c.'],
      // A table the chunk starts inside: no header to name its cells by.
      ['sentence', 'e; f.'],
      ['sentence', 'g; h.'],
    ]);
  });

  it('names the API a section documents from its heading', () => {
    expect(apiName('Server › Factory › bodyLimit')).toBe('bodyLimit');
    expect(apiName('Docs › Reply › .header(key, value)')).toBe('reply.header(key, value)');
    expect(apiName('Guide › Getting Started')).toBeUndefined();
    expect(apiName('Super Bowl 50')).toBeUndefined();
  });

  it('tells how-to, definition and yes/no questions apart', () => {
    expect(questionKind('How do I enable logging?')).toBe('how-to');
    expect(questionKind("What's the best way to log?")).toBe('how-to');
    expect(questionKind('What is a hook?')).toBe('definition');
    expect(questionKind('Is logging on by default?')).toBe('yes-no');
    expect(questionKind('Which port is used?')).toBe('other');
  });

  it('finds identifiers by their words: setErrorHandler answers to "error handler" and "handle errors"', () => {
    expect(analyze('setErrorHandler')).toEqual(expect.arrayContaining(['set', 'error', 'handler', 'handl']));
    expect(analyze('handle errors')).toEqual(['handl', 'error']);
    // Prose keeps plain stemming: only identifiers' agent nouns also name their verb.
    expect(analyze('the handler')).toEqual(['handler']);
  });
});

describe('answers from documentation', () => {
  const passages = passagesOf(SERVER_DOC);

  it('answers a how-to with the API the section documents, the explanation cited, and its code example whole', () => {
    const reply = ask('How do I limit the maximum payload size?', passages);
    expect(reply.startsWith('`bodyLimit`: Defines the maximum payload, in bytes, the server is allowed to accept. [')).toBe(true);
    expect(reply).toContain("```js\nconst fastify = require('fastify')({ bodyLimit: 1024 })\n\nfastify.post('/', handler)\n```");
    const header = ask('How do I set a response header?', passages);
    expect(header).toMatch(/^`reply\.header\(key, value\)`: Sets a response header\. \[\d\]/);
    expect(header).toContain("reply.header('x-powered-by', 'cairn')");
  });

  it('answers other questions with the best sentences only, and refuses a question the passages do not answer, naming what it searched', () => {
    const reply = ask('What is the default of compress?', passages);
    expect(reply).toContain('Option: `compress`; Default: `false`; Description: Whether replies are gzipped.');
    expect(reply).not.toContain('```');
    expect(ask('Who won the football world cup?', passages)).toMatch(/^I couldn't find anything about that in the connected knowledge: the \d+ closest passages \(the first from “Server/);
  });

  it('refuses when the best sentence names only one of the question’s words', () => {
    // "default" is in the bodyLimit section; nothing speaks of a request timeout.
    expect(ask('What is the default request timeout?', passages)).toMatch(/^I couldn't find anything/);
  });

  it('gives a how-to the example of a neighbouring section of the same page, about the question, when its own section has none', () => {
    const page = passagesOf('# Parsers\n\n## Registering a content type\n\n```js\nfastify.addContentTypeParser(\'text/csv\', parseCsv)\n```\n\n## Options\n\nA custom parser accepts the content types it is registered for.');
    const reply = ask('How do I accept a custom content type?', page);
    expect(reply).toMatch(/^A custom parser accepts the content types it is registered for\. \[\d\]/);
    expect(reply).toContain("fastify.addContentTypeParser('text/csv', parseCsv)");
    // A neighbour about something else lends nothing.
    const unrelated = passagesOf('# Parsers\n\n## Logging\n\n```js\nfastify.log.info(1)\n```\n\n## Options\n\nA custom parser accepts the content types it is registered for.');
    expect(ask('How do I accept a custom content type?', unrelated)).not.toContain('```');
  });
});

describe('answers that need two passages, citing only what they use', () => {
  // Ten paragraphs of one kind: the two a question needs among eight that share its words.
  const people = [
    { title: 'Harbour of Salt', text: 'Harbour of Salt is a 2004 thriller film directed by Tomas Brekke. Set in a fishing town, it tells of a customs officer. It was shot over six weeks.' },
    { title: 'Tomas Brekke', text: 'Tomas Brekke (1958 – 2019) was a director known for crime films. He was born in Bergen, the son of a shipbuilder. He worked as a photographer.' },
    { title: 'Mirela Vant', text: 'Mirela Vant (born 1961) is a film director. She was born in Tallinn and studied in Moscow.' },
    { title: 'The Glass Orchard', text: 'The Glass Orchard is a 1998 drama film directed by Mirela Vant. It premiered at the Venice Film Festival.' },
    { title: 'Coastal Open', text: 'The Coastal Open is a tennis tournament held each summer in the city of Marbeck. It was first held in 1968 and is played on clay courts.' },
  ];
  const cited = (reply: string) => [...new Set([...reply.matchAll(/\[(\d+)\]/g)].map((m) => people[Number(m[1]) - 1]!.title))];

  it('follows a bridge: the film names its director, the director’s passage says where he was born', () => {
    const reply = ask('In which city was the director of the film Harbour of Salt born?', people);
    expect(reply).toContain('Bergen');
    expect(cited(reply)).toEqual(['Harbour of Salt', 'Tomas Brekke']);
    // The second hop's sentence starts "He": it is labelled with whom it is about.
    expect(reply).toContain('Tomas Brekke: He was born in Bergen');
  });

  it('answers a question no single sentence covers enough when the hop covers the rest, and names the sentence that leads there', () => {
    const places = [
      { title: 'Aldo Ferrante', text: 'Aldo Ferrante (1822 – 1891) was a composer of operas. He was born in Castelmoro and trained in Milan.' },
      { title: 'Castelmoro', text: 'Castelmoro is a town in the north. The river Lessa flows through its old centre.' },
      { title: 'Valdegna', text: 'Valdegna is a village in the mountains. The river Orsa rises in the hills above it.' },
    ];
    const reply = ask('Which river flows through the birthplace of the composer Aldo Ferrante?', places);
    expect(reply).toMatch(/born in Castelmoro.*\[1\].*river Lessa flows.*\[2\]/);
    expect(reply).not.toContain('[3]');
  });

  it('compares two things with a sentence from each, and leaves out a passage that repeats what is chosen', () => {
    const reply = ask('Which film was released earlier, The Glass Orchard or Harbour of Salt?', people);
    expect(cited(reply).sort()).toEqual(['Harbour of Salt', 'The Glass Orchard']);
    expect(reply).toContain('1998');
    expect(reply).toContain('2004');
  });

  it('does not hop when one passage answers, and cites only it', () => {
    const reply = ask('On what surface is the Coastal Open played?', people);
    expect(reply).toContain('clay courts');
    expect(cited(reply)).toEqual(['Coastal Open']);
  });
});

describe('questions that rule something out', () => {
  it('reads "without starting the server" as ruling the server out: no evidence for it, and its section is the wrong one', () => {
    const passages = [
      { title: 'Testing › Testing with a running server', text: 'Fastify can also be tested after starting the server with `fastify.listen()`. You send real requests to the server.\n\n```js\nawait fastify.listen()\n```' },
      { title: 'Testing › Benefits of using fastify.inject()', text: 'Fastify comes with built-in support for fake HTTP injection, so routes can be tested with `fastify.inject()`.\n\n```js\nawait fastify.inject({ url: "/" })\n```' },
    ];
    const reply = ask('How do I test routes without starting the server?', passages);
    expect(reply).toContain('fastify.inject');
    expect(reply).not.toContain('[1]');
  });
});

describe('sections of one page read as one text', () => {
  it('quotes a second section of the same page that says more about what is asked, but not another document that only repeats it', () => {
    const page = [
      { title: 'README.md › Usage', text: 'Usage rows show estimated costs per model.' },
      { title: 'README.md › Usage › Prices', text: 'Costs are estimated from `MODEL_PRICES`, in USD per 1,000 tokens.' },
    ];
    expect(ask('How are usage costs estimated?', page)).toContain('MODEL_PRICES');
    const documents = [
      { title: 'Harbour of Salt', text: 'Harbour of Salt is a 2004 thriller film directed by Tomas Brekke.' },
      { title: 'The Glass Orchard', text: 'The Glass Orchard is a 1998 drama film directed by Mirela Vant.' },
    ];
    expect(ask('Who directed the film Harbour of Salt?', documents)).not.toContain('[2]');
  });
});

describe('comparisons', () => {
  it('quotes a sentence about each side of "A or B", even when one side’s best sentence ranks well below the other’s', () => {
    const reply = ask("Which magazine was started first Arthur's Magazine or First for Women?", [
      { title: "Arthur's Magazine", text: "Arthur's Magazine (1844–1846) was an American literary periodical published in Philadelphia in the 19th century. Edited by T.S. Arthur, it featured work by Edgar A. Poe. In May 1846 it was merged into Godey's Lady's Book." },
      { title: 'First for Women', text: "First for Women is a woman's magazine published by Bauer Media Group in the USA. The magazine was started in 1989. It is based in Englewood Cliffs, New Jersey. In 2011 the circulation of the magazine was 1,310,696 copies." },
      { title: 'Echosmith', text: 'Echosmith is an American indie pop band formed in February 2009 in Chino, California.' },
    ]);
    expect(reply).toContain('1844');
    expect(reply).toContain('1989');
    expect(reply).not.toContain('[3]');
  });
});

describe('a bridge to a passage that only mentions the name', () => {
  it('finds whom someone was married to in another document that names them, and says who that is', () => {
    const reply = ask("What nationality was James Henry Miller's wife?", [
      { title: 'Ewan MacColl', text: 'James Henry Miller (25 January 1915 – 22 October 1989), better known by his stage name Ewan MacColl, was an English folk singer and songwriter.' },
      { title: 'Peggy Seeger', text: 'Margaret "Peggy" Seeger (born June 17, 1935) is an American folksinger. She lived in Britain for more than 30 years, and was married to the singer Ewan MacColl until his death in 1989.' },
      { title: 'Echosmith', text: 'Echosmith is an American indie pop band formed in February 2009 in Chino, California.' },
    ]);
    expect(reply).toMatch(/Ewan MacColl.*\[1\].*American folksinger\. \[2\].*married to the singer Ewan MacColl.*\[2\]/);
    expect(reply).not.toContain('[3]');
  });
});
