// The Debian parts of scripts/package.mjs that are computed rather than copied: the Depends field
// from the executable's own needs, the changelog and the man page (docs/decisions.md, "Packaging").
import { execFileSync } from 'node:child_process';

/**
 * The first GCC release whose libstdc++ defines a symbol version, for `libstdc++6 (>= …)`; every
 * version below a table's first entry was there by GCC 4.8 (older than any Debian this supports).
 */
const LIBSTDCXX = {
  GLIBCXX: {
    19: '4.8',
    20: '4.9',
    21: '5',
    22: '6',
    23: '7',
    24: '7',
    25: '8',
    26: '9',
    27: '9',
    28: '9',
    29: '11',
    30: '12',
  },
  CXXABI: { 7: '4.8', 8: '4.9', 9: '5', 10: '6', 11: '7', 12: '9', 13: '11' },
};
const GLIBC_LIBS = ['libc.so.6', 'libm.so.6', 'libdl.so.2', 'libpthread.so.0', 'librt.so.1', 'ld-linux-x86-64.so.2'];

const compareVersions = (a, b) => {
  const [x, y] = [a.split('.').map(Number), b.split('.').map(Number)];
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};
const highest = (versions) => versions.reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b));

/**
 * The Depends field for an ELF executable, as dpkg-shlibdeps would compute it, but valid from Debian
 * 10 on: each library it links (DT_NEEDED) mapped to its package, versioned by the highest symbol
 * version it asks of that library (`.gnu.version_r`). libgcc_s is `libgcc1` up to Debian 10 and
 * `libgcc-s1` from 11, so both are named. Throws on anything it does not know, never guesses.
 */
export function shlibsDepends(executable) {
  const dynamic = execFileSync('readelf', ['--dynamic', '--wide', executable], { encoding: 'utf8' });
  const needed = [...dynamic.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
  // Node's binary has some 75,000 versioned symbols: a few MB of text before the section we read.
  const info = execFileSync('readelf', ['--version-info', '--wide', executable], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  /** @type {Record<string, string[]>} soname → the symbol versions asked of it */
  const wants = Object.fromEntries(needed.map((lib) => [lib, []]));
  let file = '';
  for (const line of info.slice(info.indexOf(".gnu.version_r'")).split('\n')) {
    const lib = /File: (\S+)/.exec(line);
    if (lib) file = lib[1];
    const name = /Name: (\S+)/.exec(line);
    if (name && file) wants[file] = [...(wants[file] ?? []), name[1]];
  }
  const glibc = [];
  const cxx = [];
  const gcc = [];
  for (const [lib, versions] of Object.entries(wants)) {
    const unknown = (v) => new Error(`${executable} needs ${v} of ${lib}: add it to scripts/debian.mjs`);
    if (GLIBC_LIBS.includes(lib)) {
      for (const v of versions) {
        const m = /^GLIBC_(\d+(?:\.\d+)+)$/.exec(v);
        if (!m) throw unknown(v);
        glibc.push(m[1]);
      }
    } else if (lib === 'libstdc++.so.6') {
      for (const v of versions) {
        const m = /^(GLIBCXX_3\.4|CXXABI_1\.3)(?:\.(\d+))?$/.exec(v);
        if (!m) throw unknown(v);
        const table = m[1].startsWith('GLIBCXX') ? LIBSTDCXX.GLIBCXX : LIBSTDCXX.CXXABI;
        const minor = Number(m[2] ?? 0);
        const first = Math.min(...Object.keys(table).map(Number));
        if (minor < first) cxx.push('4.8');
        else if (table[minor]) cxx.push(table[minor]);
        else throw unknown(v);
      }
    } else if (lib === 'libgcc_s.so.1') {
      for (const v of versions) {
        const m = /^GCC_(\d+(?:\.\d+)+)$/.exec(v);
        if (!m) throw unknown(v);
        gcc.push(m[1]);
      }
    } else throw new Error(`${executable} links ${lib}: add its Debian package to scripts/debian.mjs`);
  }
  if (glibc.length === 0) throw new Error(`${executable} asks no GLIBC_ version: is it a glibc executable?`);
  const depends = [`libc6 (>= ${highest(glibc)})`];
  if ('libstdc++.so.6' in wants) depends.push(cxx.length ? `libstdc++6 (>= ${highest(cxx)})` : 'libstdc++6');
  if ('libgcc_s.so.1' in wants) {
    const v = gcc.length ? highest(gcc) : '3.0';
    depends.push(`libgcc-s1 (>= ${v}) | libgcc1 (>= 1:${v})`);
  }
  return depends.join(', ');
}

/** RFC 2822 in UTC, as changelogs carry it: `Fri, 27 Nov 2026 23:00:00 +0000`. */
const changelogDate = (epoch) => new Date(epoch * 1000).toUTCString().replace('GMT', '+0000');

/**
 * usr/share/doc/<package>/changelog (gzipped by the caller): one entry for this version, dated
 * SOURCE_DATE_EPOCH. The package is native (built from this repository, no Debian revision), so
 * the name is `changelog`, not `changelog.Debian`.
 */
export function changelog({ name, version, maintainer, epoch }) {
  return [
    `${name} (${version}) unstable; urgency=medium`,
    '',
    `  * Palisade ${version}. What changed is in the project's history; the agent's`,
    '    documentation is /usr/share/doc/palisade-agent/agent.md.',
    '',
    ` -- ${maintainer}  ${changelogDate(epoch)}`,
    '',
  ].join('\n');
}

/** Text as roff shows it literally: backslashes, hyphens (not typographic dashes), leading dots and quotes. */
export const roff = (text) =>
  text
    .replaceAll('\\', '\\e')
    .replaceAll('-', '\\-')
    .replace(/^([.'])/gm, '\\&$1');

/**
 * The man page palisade-agent(8), written from the CLI's own help text (`--help` and
 * `help <command>`), so there is one source for both.
 * @param {{ help: (args: string[]) => string, version: string, epoch: number, summary: string }} args
 */
export function manPage({ help, version, epoch, summary }) {
  const top = help(['--help']);
  const section = (text, title) => {
    const m = new RegExp(`^${title}:\\n((?:  .*\\n?)+)`, 'm').exec(text);
    return m ? m[1].replace(/\n$/, '') : '';
  };
  const description = (text) =>
    /^Usage: .*\n\n((?:.+\n)+)/m
      .exec(text)?.[1]
      .trim()
      .replace(/\s*\n\s*/g, ' ') ?? '';
  const commands = [...section(top, 'Commands').matchAll(/^ {2}(\S+)/gm)].map((m) => m[1]).filter((c) => c !== 'help');
  const date = new Date(epoch * 1000).toISOString().slice(0, 10);
  const lines = [
    `.TH PALISADE-AGENT 8 "${date}" "palisade-agent ${version}" "System Administration"`,
    '.SH NAME',
    `palisade\\-agent \\- ${roff(summary)}`,
    '.SH SYNOPSIS',
    '.B palisade\\-agent',
    '.I command',
    '.RI [ options ]',
    '.SH DESCRIPTION',
    roff(description(top)),
    '.PP',
    'The daemon',
    '.RB ( "palisade\\-agent run" )',
    'is started by the systemd unit palisade\\-agent.service as the user palisade\\-agent, with the',
    'capability CAP_NET_ADMIN only. Run the other commands as root.',
    '.SH OPTIONS',
    '.nf',
    roff(section(top, 'Options')),
    '.fi',
    '.SH COMMANDS',
  ];
  for (const command of commands) {
    const text = help(['help', command]);
    const usage = /^Usage: (.*)$/m.exec(text)?.[1] ?? `palisade-agent ${command}`;
    lines.push(`.SS "${roff(usage)}"`, roff(description(text)));
    const options = section(text, 'Options');
    if (options) lines.push('.PP', '.nf', roff(options), '.fi');
  }
  lines.push(
    '.SH FILES',
    '.TP',
    '.I /etc/palisade\\-agent/agent.conf',
    'the configuration (a conffile, 0600, owned by palisade\\-agent)',
    '.TP',
    '.I /var/lib/palisade\\-agent/',
    'the state directory: the key hash, the enrolment, lists',
    '.SH SEE ALSO',
    '.BR nft (8),',
    '.BR systemctl (1),',
    '.I /usr/share/doc/palisade\\-agent/agent.md',
    '',
  );
  return lines.join('\n');
}
