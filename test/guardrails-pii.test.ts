import { describe, expect, it } from 'vitest';
import { findPii, Guard, PII_ENTITIES } from '../shared/guardrails';

/** Each detector on values it must find and look-alikes it must not. */
const found = (text: string) => findPii(text, PII_ENTITIES).map((m) => `${m.entity}:${m.value}`);

describe('personal data detectors', () => {
  it.each([
    ['email', 'write to li.wei+orders@mail.example.org today', 'email:li.wei+orders@mail.example.org'],
    ['a Luhn-valid Visa, spaced', 'card 4111 1111 1111 1111 exp 09/28', 'credit_card:4111 1111 1111 1111'],
    ['a Luhn-valid Amex', 'amex 378282246310005', 'credit_card:378282246310005'],
    ['a German IBAN', 'IBAN DE89 3704 0044 0532 0130 00', 'iban:DE89 3704 0044 0532 0130 00'],
    ['a British IBAN, unspaced', 'to GB29NWBK60161331926819 please', 'iban:GB29NWBK60161331926819'],
    ['an SSN', 'SSN 123-45-6789', 'us_ssn:123-45-6789'],
    ['a US phone', 'call (212) 555-0187', 'phone:(212) 555-0187'],
    ['an international phone with a one-digit area code', 'on +61 2 9374 4000 now', 'phone:+61 2 9374 4000'],
    ['a UK mobile', 'Tel: 07700 900123', 'phone:07700 900123'],
    ['an IPv4 address', 'from 203.0.113.45', 'ip_address:203.0.113.45'],
    ['an IPv6 address', 'from 2001:db8::8a2e:370:7334', 'ip_address:2001:db8::8a2e:370:7334'],
    ['an AWS access key', 'key AKIAIOSFODNN7EXAMPLE', 'aws_access_key:AKIAIOSFODNN7EXAMPLE'],
    ['an OpenAI key', 'sk-proj-abcdefghijklmnop1234567890', 'api_key:sk-proj-abcdefghijklmnop1234567890'],
  ])('finds %s', (_, text, want) => {
    expect(found(text)).toEqual([want]);
  });

  it.each([
    ['a Luhn-invalid card number', 'card 4111 1111 1111 1112 declined'],
    ['an order number', 'Order number 123456789012 shipped'],
    ['an order code with hyphens', 'Order #A-1234-5678 is late'],
    ['a date', 'Invoice dated 2026-11-26'],
    ['a version number', 'Upgrade to version 1.2.3 and 10.0'],
    ['a price', 'It costs 1,234.56 EUR'],
    ['an IBAN with a wrong checksum', 'IBAN DE88 3704 0044 0532 0130 00 bounced'],
    ['an SSN the SSA never issues', 'SSN 000-12-3456 or 666-12-3456 or 912-12-3456'],
    ['a ticket number', 'Ticket 2026-1187 was closed'],
    ['a list of digits', 'Score 1-2-3-4-5 and 12:30'],
  ])('does not take %s for personal data', (_, text) => {
    expect(found(text)).toEqual([]);
  });

  it('finds only the entities asked for, and a card is never also a phone', () => {
    expect(findPii('card 4111 1111 1111 1111, mail a@example.com', ['phone'])).toEqual([]);
    expect(findPii('card 4111 1111 1111 1111, mail a@example.com', ['email']).map((m) => m.value)).toEqual(['a@example.com']);
  });
});

describe('the guard', () => {
  it('gives a value the same token each time, and restores tokens in text and tool arguments', () => {
    const guard = new Guard({ pii: { entities: ['email'], action: 'tokenize' } });
    expect(guard.protect('mail a@example.com and b@example.com, then a@example.com', 'input')).toBe('mail <EMAIL_1> and <EMAIL_2>, then <EMAIL_1>');
    expect(guard.restoreArgs({ to: ['<EMAIL_2>'], cc: '<EMAIL_1>', n: 1 })).toEqual({ to: ['b@example.com'], cc: 'a@example.com', n: 1 });
    // A later turn, from the vault, keeps the numbering.
    const later = new Guard({ pii: { entities: ['email'], action: 'tokenize' } }, guard.vault());
    expect(later.protect('and c@example.com or b@example.com', 'input')).toBe('and <EMAIL_3> or <EMAIL_2>');
  });

  it('lets a stream through a sentence at a time, each restored whole', () => {
    const guard = new Guard({ pii: { entities: ['email'], action: 'tokenize' } }, { '<EMAIL_1>': 'a@example.com' });
    const stream = guard.stream();
    const out = ['I wrote to <EM', 'AIL_1>', '. It is sent', ' now'].map((d) => stream.push(d));
    expect(out).toEqual(['', '', 'I wrote to a@example.com. ', '']);
    expect(stream.end()).toBe('It is sent now');
  });

  it('matches a denied topic through the analyzer, and blocked words as whole words only', () => {
    const guard = new Guard({ deniedTopics: [{ name: 'crypto', phrases: ['buy crypto'] }], blockedWords: ['ass'] });
    expect(guard.checkMessage('I was buying crypto last year')).toBe(true);
    expect(new Guard(guard.settings).checkMessage('I want to pass the class')).toBe(false);
    expect(new Guard(guard.settings).checkMessage('crypto: should I buy?')).toBe(false);
  });
});
