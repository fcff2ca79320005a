/**
 * Row values as JSON (SPEC §6): numbers and booleans where JSON carries them exactly (int2, int4,
 * float4/8, bool), JSON for json/jsonb, arrays for arrays, and PostgreSQL's own text form for the rest
 * (numeric, int8, dates, intervals, bytea, money, inet, ...), so nothing is rounded or reformatted.
 */
import type { TypeInfo } from './typeInfo';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const INT2 = 21;
const INT4 = 23;
const FLOAT4 = 700;
const FLOAT8 = 701;
const BOOL = 16;
const JSON_OID = 114;
const JSONB = 3802;

export function encodeValue(text: string | null, oid: number, types: ReadonlyMap<number, TypeInfo>): JsonValue {
  if (text === null) return null;
  switch (oid) {
    case INT2:
    case INT4:
      return Number(text);
    case FLOAT4:
    case FLOAT8: {
      // NaN and ±Infinity have no JSON number: keep PostgreSQL's spelling.
      const n = Number(text);
      return Number.isFinite(n) ? n : text;
    }
    case BOOL:
      return text === 't';
    case JSON_OID:
    case JSONB:
      return JSON.parse(text) as JsonValue;
    default:
      break;
  }
  const type = types.get(oid);
  if (type?.category === 'A' && type.elem !== 0) {
    return mapArray(parseArrayLiteral(text, type.delim || ','), (element) => encodeValue(element, type.elem, types));
  }
  return text;
}

type Nested<T> = T | Nested<T>[];

function mapArray(value: Nested<string | null>[], f: (element: string | null) => JsonValue): JsonValue[] {
  return value.map((v) => (Array.isArray(v) ? mapArray(v, f) : f(v)));
}

/**
 * Parses PostgreSQL's array output: `{1,2}`, `{{a,b},{c,d}}`, `{"x y",NULL,"q\"uote"}`, and the
 * `[0:1]={…}` form with explicit bounds (bounds dropped).
 */
export function parseArrayLiteral(text: string, delim = ','): Nested<string | null>[] {
  let i = text.startsWith('[') ? text.indexOf('=') + 1 : 0;
  const parseLevel = (): Nested<string | null>[] => {
    if (text[i] !== '{') throw new Error(`Malformed array literal at ${i}: ${text}`);
    i++;
    const items: Nested<string | null>[] = [];
    if (text[i] === '}') {
      i++;
      return items;
    }
    for (;;) {
      if (text[i] === '{') {
        items.push(parseLevel());
      } else if (text[i] === '"') {
        i++;
        let value = '';
        while (i < text.length && text[i] !== '"') {
          if (text[i] === '\\') i++;
          value += text[i] ?? '';
          i++;
        }
        i++;
        items.push(value);
      } else {
        let end = i;
        while (end < text.length && text[end] !== delim && text[end] !== '}') end++;
        const raw = text.slice(i, end).trim();
        items.push(raw === 'NULL' ? null : raw);
        i = end;
      }
      if (text[i] === delim) {
        i++;
        continue;
      }
      if (text[i] === '}') {
        i++;
        return items;
      }
      throw new Error(`Malformed array literal at ${i}: ${text}`);
    }
  };
  return parseLevel();
}
