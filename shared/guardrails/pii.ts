import ipaddr from 'ipaddr.js';

/**
 * Personal data and credentials in text, found locally and deterministically: a pattern finds a
 * candidate and a check confirms it (Luhn for card numbers, ISO 13616's mod-97 for IBANs, the SSA's
 * rules for US social security numbers, a real address for IPs), so an order number is not a phone
 * and a Luhn-invalid number is not a card. No model is asked.
 */
export const PII_ENTITIES = ['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'aws_access_key', 'api_key'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

export interface PiiMatch {
  entity: PiiEntity;
  start: number;
  end: number;
  value: string;
}

const digitsOf = (s: string) => s.replace(/\D/g, '');

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** ISO 13616: the country's length, then mod 97 of the rearranged number is 1. */
const IBAN_LENGTHS: Record<string, number> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};
function ibanValid(raw: string): boolean {
  const iban = raw.replace(/\s/g, '').toUpperCase();
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const ch of rearranged) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? String(code - 55) : ch;
    for (const digit of value) remainder = (remainder * 10 + (digit.charCodeAt(0) - 48)) % 97;
  }
  return remainder === 1;
}

/** The SSA never issues area 000, 666 or 900–999, group 00 or serial 0000. */
function ssnValid(value: string): boolean {
  const [area, group, serial] = value.split(/[- ]/);
  return area !== '000' && area !== '666' && !area!.startsWith('9') && group !== '00' && serial !== '0000';
}

/** A phone number: 7 to 15 digits (E.164), written as people write them — and not a date, a card or an id. */
function phoneValid(value: string): boolean {
  const digits = digitsOf(value);
  if (digits.length < 7 || digits.length > 15) return false;
  // A bare run of digits is an order number or an id unless it says it is international (+).
  if (/^\d+$/.test(value)) return false;
  // An SSN's shape is an SSN's (valid or not), never a phone.
  if (/^\d{3}-\d{2}-\d{4}$/.test(value)) return false;
  // Dates (2026-11-26, 26.11.2026) and times are not phones.
  if (/^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/.test(value)) return false;
  // Every group but the first (and, after a +country code, the area code: +61 2 …) has at least 2
  // digits (1-2-3-4-5 is a list, not a number).
  const groups = value.replace(/^\+/, '').split(/[\s.\-()]+/).filter(Boolean);
  if (!groups.slice(value.startsWith('+') ? 2 : 1).every((g) => g.length >= 2)) return false;
  // Two bare groups (no +, no parentheses) are a phone when they are a local 3+4 number or long
  // enough to hold an area code: a ticket 2026-1187 is not.
  if (groups.length === 2 && !/[+(]/.test(value)) return (groups[0]!.length === 3 && groups[1]!.length === 4) || digits.length >= 9;
  return true;
}

/** An IPv4 or IPv6 address: parsed as one (a version number such as 1.2.3 is not). */
function ipValid(value: string): boolean {
  if (value.includes(':')) return ipaddr.IPv6.isValid(value) && (value.match(/:/g)?.length ?? 0) >= 2 && /[0-9a-f]{1,4}:[0-9a-f]{0,4}:/i.test(value);
  return ipaddr.IPv4.isValidFourPartDecimal(value);
}

/** Long random-looking secrets: a known prefix, and letters and digits mixed. */
function apiKeyValid(value: string): boolean {
  const body = value.replace(/^[A-Za-z]+[-_]/, '');
  return /\d/.test(body) && /[A-Za-z]/.test(body);
}

interface Detector {
  entity: PiiEntity;
  pattern: RegExp;
  valid?: (value: string) => boolean;
}

// Order matters where matches overlap: the earlier detector wins (a card number is not also a phone).
const DETECTORS: Detector[] = [
  { entity: 'email', pattern: /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b/g },
  { entity: 'aws_access_key', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g },
  {
    entity: 'api_key',
    pattern: /\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}|gh[pousr]_[A-Za-z0-9]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|cak_[A-Za-z0-9_-]{16,})/g,
    valid: apiKeyValid,
  },
  { entity: 'iban', pattern: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?\b/g, valid: ibanValid },
  { entity: 'credit_card', pattern: /\b\d(?:[ -]?\d){12,18}\b/g, valid: (v) => luhn(digitsOf(v)) && /^(?:4|5[1-5]|2[2-7]|3[47]|3[0689]|6|35)/.test(digitsOf(v)) },
  { entity: 'us_ssn', pattern: /\b\d{3}-\d{2}-\d{4}\b/g, valid: ssnValid },
  { entity: 'ip_address', pattern: /\b(?:\d{1,3}\.){3}\d{1,3}\b|(?:\b[0-9A-Fa-f]{1,4})?(?::[0-9A-Fa-f]{0,4}){2,7}(?::\d{1,3}(?:\.\d{1,3}){3})?/g, valid: ipValid },
  // Not inside an identifier (A-1234-5678 is an order, not a phone): nothing word-like or a hyphen before it.
  { entity: 'phone', pattern: /(?<![\w-])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{1,5}(?:[\s.-]\d{2,6}){1,4}\b|\+\d{7,15}\b/g, valid: phoneValid },
];

/**
 * Every match of the entities asked for, in order of position, none overlapping another (the
 * detector listed first keeps a contested span).
 */
export function findPii(text: string, entities: readonly PiiEntity[]): PiiMatch[] {
  const wanted = new Set(entities);
  const found: PiiMatch[] = [];
  const taken = (start: number, end: number) => found.some((m) => start < m.end && end > m.start);
  for (const detector of DETECTORS) {
    // Detectors of entities not asked for still claim their spans: a card number is never read as a phone.
    for (const match of text.matchAll(detector.pattern)) {
      const value = match[0].replace(/[\s.-]+$/, '');
      const start = match.index;
      const end = start + value.length;
      if (value.length === 0 || taken(start, end) || (detector.valid && !detector.valid(value))) continue;
      found.push({ entity: detector.entity, start, end, value });
    }
  }
  return found.filter((m) => wanted.has(m.entity)).sort((a, b) => a.start - b.start);
}
