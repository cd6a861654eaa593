import { describe, expect, it } from 'vitest';
import { checkDrafts, jsonOf } from '../console/src/json-input';

describe("the console's JSON boxes", () => {
  it('gives the value, or the parser’s reason', () => {
    expect(jsonOf('{"a": 1}')).toEqual({ value: { a: 1 } });
    expect(jsonOf('{"a": ')).toEqual({ reason: expect.stringMatching(/JSON/) });
  });

  it('marks each draft that is not JSON, clears a mended one’s old error, and gives values only when all parse', () => {
    const drafts = [
      { text: '{"name": "a"}', parseError: 'Not JSON: from the last try' },
      { text: '{"name": ' },
    ];
    const first = checkDrafts(drafts, (d) => d.text);
    expect(first.values).toBeUndefined();
    expect(first.drafts[0]!.parseError).toBeUndefined();
    expect(first.drafts[1]!.parseError).toMatch(/^Not JSON: /);
    const second = checkDrafts([first.drafts[0]!, { ...first.drafts[1]!, text: '{"name": "b"}' }], (d) => d.text);
    expect(second.values).toEqual([{ name: 'a' }, { name: 'b' }]);
    expect(second.drafts.map((d) => d.parseError)).toEqual([undefined, undefined]);
  });
});
