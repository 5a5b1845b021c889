/**
 * The body parser's per-request steps on their own: the Content-Type match
 * (with its one-entry cache of the last accepted header), UTF-8 decoding
 * (with its ASCII shortcut) and JSON parsing with the poisoning screen.
 * test/http/errors.test.ts and test/reliability/hostile-payloads.test.ts
 * drive the same paths through the real app.
 */
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../src/errors.ts';
import { decodeUtf8Body, isJsonContentType, parseJsonBody } from '../../src/http/json-body-parser.ts';

const ACCEPTED = ['application/json', 'application/json; charset=utf-8', 'application/json;charset=utf-8', 'Application/JSON; Charset=UTF-8', 'application/json; charset="utf-8"'];
const REFUSED = [undefined, '', ' application/json', 'application/json ', 'application/json ; charset=utf-8', 'application/json\t; charset=utf-8', 'application/json; charset=latin1', 'application/jsonx', 'constructor', 'text/plain'];

describe('isJsonContentType', () => {
  it('answers every header the same whatever header it accepted last', () => {
    for (const last of ACCEPTED) {
      for (const header of [...ACCEPTED, ...REFUSED]) {
        expect(isJsonContentType(last)).toBe(true);
        expect(isJsonContentType(header), `${JSON.stringify(header)} after ${last}`).toBe(ACCEPTED.includes(header as string));
        expect(isJsonContentType(header), `${JSON.stringify(header)} twice`).toBe(ACCEPTED.includes(header as string));
      }
    }
  });
});

describe('decodeUtf8Body', () => {
  it.each([
    ['ASCII', Buffer.from('{"a":"b"}'), '{"a":"b"}'],
    ['UTF-8 beyond ASCII', Buffer.from('{"a":"é😀"}'), '{"a":"é😀"}'],
    ['a byte-order mark, kept as text', Buffer.from('\ufeff{}'), '\ufeff{}'],
    ['nothing', Buffer.alloc(0), ''],
  ])('decodes %s', (_name, bytes, text) => {
    expect(decodeUtf8Body(bytes)).toBe(text);
  });

  it.each([
    ['a lone continuation byte', [0x7b, 0x80, 0x7d]],
    ['latin1 é', [0x22, 0xe9, 0x22]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
  ])('refuses %s with 400', (_name, bytes) => {
    expect(() => decodeUtf8Body(Buffer.from(bytes))).toThrow(ProblemError);
  });
});

describe('parseJsonBody', () => {
  it('parses a body whose escapes spell no poisoning key', () => {
    expect(parseJsonBody('{"n\\u00e1me":"Ad\\u00e1","protocol":"https"}')).toEqual({ 'náme': 'Adá', protocol: 'https' });
  });

  it('skips one leading byte order mark (RFC 8259 8.1), and only one', () => {
    expect(parseJsonBody('\ufeff{"a":1}')).toEqual({ a: 1 });
    expect(parseJsonBody('\ufeff')).toBeUndefined();
    expect(() => parseJsonBody('\ufeff\ufeff{"a":1}')).toThrow(ProblemError);
    expect(() => parseJsonBody('{"a":1}\ufeff')).toThrow(ProblemError);
    expect(() => parseJsonBody('\ufeff{"__proto__":{}}')).toThrow(ProblemError);
  });

  it.each([
    ['{"a":{"\\u005f_proto__":1}}', 'a.__proto__'],
    ['[{"constructor":{"prototype":{}}}]', '$[0].constructor.prototype'],
  ])('refuses %s naming %s', (text, path) => {
    let error: unknown;
    try {
      parseJsonBody(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProblemError);
    expect((error as ProblemError).errors).toEqual([{ path, message: 'is a forbidden key (prototype poisoning)' }]);
  });
});
