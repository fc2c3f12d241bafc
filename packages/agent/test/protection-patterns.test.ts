// The shipped log patterns against the annotated sample corpus in test/fixtures/logs (the way
// fail2ban checks its filters): every annotation holds, and every shipped pattern matches at least once.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { compilePattern, matchLine, parsePatternInput, SHIPPED_PATTERNS } from '../src/protection/log-patterns.js';

const dir = fileURLToPath(new URL('../../test/fixtures/logs/', import.meta.url));

interface Case {
  file: string;
  line: number;
  pattern: string;
  ip: string | null;
  text: string;
}

function corpus(): Case[] {
  const cases: Case[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const lines = readFileSync(`${dir}${file}`, 'utf8').split('\n');
    lines.forEach((l, i) => {
      const m = /^# expect: (\S+) (\S+)$/.exec(l);
      if (!m) return;
      cases.push({ file, line: i + 2, pattern: m[1]!, ip: m[2] === 'none' ? null : m[2]!, text: lines[i + 1]! });
    });
  }
  return cases;
}

describe('shipped log patterns', () => {
  const cases = corpus();
  const compiled = new Map(SHIPPED_PATTERNS.map((p) => [p.name, compilePattern(p)]));

  test('the corpus has annotated lines', () => {
    assert.ok(cases.length >= 30, `${cases.length} cases`);
  });

  for (const c of cases) {
    test(`${c.file}:${c.line} ${c.pattern} → ${c.ip ?? 'no match'}`, () => {
      const p = compiled.get(c.pattern);
      assert.ok(p, `unknown pattern ${c.pattern}`);
      assert.equal(matchLine(p, c.text), c.ip);
    });
  }

  test('every shipped pattern matches at least once in the corpus', () => {
    for (const p of SHIPPED_PATTERNS) {
      assert.ok(
        cases.some((c) => c.pattern === p.name && c.ip !== null),
        `${p.name} has no matching sample line`,
      );
    }
  });

  test('every shipped pattern passes the validation custom patterns get', () => {
    for (const p of SHIPPED_PATTERNS) assert.deepEqual(parsePatternInput({ name: p.name }).regex, p.regex);
  });
});
