// The console's native artifacts, made by scripts/package.mjs (docs/deploy.md, "The console as one
// executable"; docs/decisions.md, "Packaging"):
//   palisade-console-<v>-linux-x64.tar.gz   palisade-console-<v>-linux-x64/: the console as one
//                                           executable (Node SEA: code, dashboard, install script,
//                                           package.json inside) and better_sqlite3.node beside it
//   palisade-console_<v>_amd64.deb          the same two files, a systemd unit, a system user and
//                                           /etc/palisade/console.env
// The executable's require() loads built-in modules only, so everything the console reads from its
// own package at run time is an asset here, and the native SQLite addon is a file it loads itself
// (packages/console/src/packaged.ts).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { rolldown } from 'rolldown';
import { changelog, roff, shlibsDepends } from './debian.mjs';
import { singleExecutable } from './sea.mjs';

const require = createRequire(import.meta.url);

/** Optional packages the console's dependencies try inside a try/catch and do without. */
const OPTIONAL = ['bufferutil', 'utf-8-validate', 'pg-native', 'supports-color'];
const ABSENT = '\0palisade-console-absent:';

/**
 * @param {{ root: string, out: string, work: string, version: string, epoch: number,
 *   run: (cmd: string, args: string[], opts?: object) => Buffer, step: (what: string) => void,
 *   fail: (message: string) => never, dateTree: (dir: string) => void, reproducibleTar: string[] }} ctx
 *   (dateTree and reproducibleTar: scripts/package.mjs's, so both builds date and pack alike)
 */
export async function buildConsoleNative({
  root,
  out,
  work,
  version,
  epoch,
  run,
  step,
  fail,
  dateTree,
  reproducibleTar,
}) {
  const stage = join(work, 'console-sea');
  mkdirSync(stage);
  // --- The bundle --------------------------------------------------------------------------------
  step('console: bundling packages/console/dist/src/cli.js with rolldown');
  const inlineCreateRequire = {
    name: 'palisade-console-inline-create-require',
    transform(code, id) {
      if (!id.includes('/packages/console/dist/') && !id.includes('/protocol/dist/')) return null;
      const next = code.replaceAll('createRequire(import.meta.url)(', 'require(');
      return next === code ? null : { code: next };
    },
  };
  const optionalAbsent = {
    name: 'palisade-console-optional-absent',
    resolveId: (id) => (OPTIONAL.includes(id) ? `${ABSENT}${id}` : null),
    load: (id) =>
      id.startsWith(ABSENT)
        ? `module.exports = (() => { throw new Error('${id.slice(ABSENT.length)} is not bundled'); })();`
        : null,
  };
  const bundle = await rolldown({
    input: join(root, 'packages/console/dist/src/cli.js'),
    platform: 'node',
    plugins: [inlineCreateRequire, optionalAbsent],
    logLevel: 'warn',
  });
  const cjs = join(stage, 'palisade-console.cjs');
  // As the agent's (scripts/package.mjs): no comments or layout, names kept for stack traces.
  const minify = { compress: false, mangle: false, codegen: { removeWhitespace: true, asciiOnly: true } };
  await bundle.write({ file: cjs, format: 'cjs', codeSplitting: false, minify });
  await bundle.close();
  const text = readFileSync(cjs, 'utf8');
  // A require() of a package left in the bundle would fail in the executable. These are not calls
  // but text inside strings of code that ajv and fast-json-stringify generate for standalone
  // (ahead-of-time) output, which the console never asks for.
  const generated =
    /^(?:ajv\/dist\/runtime\/|ajv-formats\/dist\/formats$|fast-json-stringify\/lib\/(?:validator|serializer)$)/;
  const external = [...text.matchAll(/\b(?:require|__require)\(["']([^"']+)["']\)/g)]
    .map((m) => m[1])
    .filter((id) => !isBuiltin(id) && !generated.test(id));
  if (text.includes('createRequire(import.meta.url)(') || external.length > 0)
    fail(`${cjs} still loads files at run time (${[...new Set(external)].join(', ')})`);

  // --- The assets --------------------------------------------------------------------------------
  // Names as packages/console/src/packaged.ts reads them: package.json, install/agent.sh, web/<path>.
  const assets = {
    'package.json': join(root, 'packages/console/package.json'),
    'install/agent.sh': join(root, 'packages/console/install/agent.sh'),
  };
  const web = join(root, 'packages/web/dist');
  for (const p of readdirSync(web, { recursive: true }).sort()) {
    if (p === 'test' || p.startsWith('test/') || !statSync(join(web, p)).isFile()) continue;
    assets[`web/${p}`] = join(web, p);
  }

  // --- The single executable ---------------------------------------------------------------------
  step(`console: single executable with Node ${process.version} (${Object.keys(assets).length} assets)`);
  const name = `palisade-console-${version}-linux-x64`;
  const dir = join(stage, name);
  mkdirSync(dir);
  const exe = join(dir, 'palisade-console');
  singleExecutable({
    stage,
    main: 'palisade-console.cjs',
    assets,
    exe,
    version,
    what: 'the console executable',
    run,
    fail,
  });

  // The addon as built for this Node by `npm install`, stripped as dh_strip strips a shared library.
  const addonSource = join(
    dirname(require.resolve('better-sqlite3/package.json', { paths: [join(root, 'packages/console')] })),
    'build/Release/better_sqlite3.node',
  );
  const addon = join(dir, 'better_sqlite3.node');
  run('strip', ['--strip-unneeded', '--remove-section=.comment', '--remove-section=.note', '-o', addon, addonSource]);
  chmodSync(addon, 0o644);
  chmodSync(dir, 0o755);
  dateTree(dir);

  step('console: tar.gz of the executable and the SQLite addon');
  const tar = join(stage, `${name}.tar`);
  run('tar', [...reproducibleTar, '--format=gnu', '-cf', tar, '-C', stage, name]);
  writeFileSync(join(out, `${name}.tar.gz`), gzipSync(readFileSync(tar), { level: 9 })); // no name, time 0: `gzip -9n`

  // --- The Debian package ------------------------------------------------------------------------
  step('console: Debian package');
  const packaging = join(root, 'packages/console/packaging');
  const deb = join(stage, 'deb');
  const debFile = (path, content, mode = 0o644) => {
    mkdirSync(dirname(join(deb, path)), { recursive: true });
    writeFileSync(join(deb, path), content);
    chmodSync(join(deb, path), mode);
  };
  const gzip = (content) => gzipSync(content, { level: 9 });
  debFile('usr/bin/palisade-console', readFileSync(exe), 0o755);
  debFile('usr/lib/palisade-console/better_sqlite3.node', readFileSync(addon));
  const control = readFileSync(join(packaging, 'control'), 'utf8');
  const field = (f) => new RegExp(`^${f}: (.*)$`, 'm').exec(control)[1];
  debFile(
    'usr/share/doc/palisade-console/changelog.gz',
    gzip(changelog({ name: 'palisade-console', version, maintainer: field('Maintainer'), epoch })),
  );
  debFile('usr/share/doc/palisade-console/copyright', readFileSync(join(packaging, 'copyright')));
  for (const doc of ['deploy.md', 'console.md'])
    debFile(`usr/share/doc/palisade-console/${doc}`, readFileSync(join(root, 'docs', doc)));
  const help = (args) => run(exe, args, { env: { PATH: '/usr/bin:/bin' } }).toString();
  debFile(
    'usr/share/man/man8/palisade-console.8.gz',
    gzip(manPage({ help, version, epoch, summary: field('Description') })),
  );
  debFile('usr/share/lintian/overrides/palisade-console', readFileSync(join(packaging, 'lintian-overrides')));
  debFile('lib/systemd/system/palisade-console.service', readFileSync(join(packaging, 'palisade-console.service')));
  // 0640 root:palisade-console once postinst has made the user (it does not exist while unpacking).
  debFile('etc/palisade/console.env', readFileSync(join(packaging, 'console.env')), 0o640);
  for (const script of ['postinst', 'prerm', 'postrm'])
    debFile(`DEBIAN/${script}`, readFileSync(join(packaging, script)), 0o755);
  debFile('DEBIAN/conffiles', '/etc/palisade/console.env\n');
  const files = readdirSync(deb, { recursive: true }).sort();
  const md5sums = files
    .filter((p) => !p.startsWith('DEBIAN') && !p.startsWith('etc/') && statSync(join(deb, p)).isFile())
    .map(
      (p) =>
        `${createHash('md5')
          .update(readFileSync(join(deb, p)))
          .digest('hex')}  ${p}\n`,
    );
  debFile('DEBIAN/md5sums', md5sums.join(''));
  for (const p of ['', ...files]) if (statSync(join(deb, p)).isDirectory()) chmodSync(join(deb, p), 0o755);
  const installedKb = Math.ceil(
    files
      .filter((p) => !p.startsWith('DEBIAN'))
      .map((p) => statSync(join(deb, p)))
      .filter((s) => s.isFile())
      .reduce((sum, s) => sum + s.size, 0) / 1024,
  );
  debFile(
    'DEBIAN/control',
    control
      .replace('@VERSION@', version)
      .replace('@INSTALLED_SIZE@', String(installedKb))
      .replace('@DEPENDS@', mergeDepends([shlibsDepends(exe), shlibsDepends(addon)])),
  );
  dateTree(deb);
  run('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', deb, join(out, `palisade-console_${version}_amd64.deb`)]);
}

/**
 * One Depends field from several (the executable's and the addon's): a clause per package, the
 * higher version where both ask for one (dpkg --compare-versions decides).
 */
function mergeDepends(fields) {
  const byPackage = new Map();
  for (const clause of fields.flatMap((f) => f.split(', '))) {
    const key = clause.replace(/ \([^)]*\)/g, '');
    const had = byPackage.get(key);
    if (had === undefined) {
      byPackage.set(key, clause);
      continue;
    }
    const v = (c) => /\(>= ([^)]+)\)/.exec(c)?.[1];
    const [a, b] = [v(had), v(clause)];
    if (a !== undefined && b !== undefined) {
      if (spawnSync('dpkg', ['--compare-versions', b, 'gt', a]).status === 0) byPackage.set(key, clause);
    }
  }
  return [...byPackage.values()].join(', ');
}

/** The man page palisade-console(8), from the CLI's own `--help`. */
function manPage({ help, version, epoch, summary }) {
  const top = help(['--help']);
  const date = new Date(epoch * 1000).toISOString().slice(0, 10);
  return [
    `.TH PALISADE-CONSOLE 8 "${date}" "palisade-console ${version}" "System Administration"`,
    '.SH NAME',
    `palisade\\-console \\- ${roff(summary)}`,
    '.SH SYNOPSIS',
    '.B palisade\\-console',
    '.RI [ command ]',
    '.RI [ options ]',
    '.SH DESCRIPTION',
    'The unit palisade\\-console.service runs',
    '.B "palisade\\-console serve"',
    'as the user palisade\\-console, with the settings of /etc/palisade/console.env.',
    'Run the other commands (backup, restore, admin, release\\-key) as that user, with the same',
    'settings (docs/deploy.md, "The console as one executable").',
    '.SH HELP',
    '.nf',
    roff(top.trimEnd()),
    '.fi',
    '.SH FILES',
    '.TP',
    '.I /etc/palisade/console.env',
    'the settings (a conffile, 0640, root:palisade\\-console)',
    '.TP',
    '.I /var/lib/palisade\\-console/',
    'the SQLite database, secret.key and artifacts/ (the agent packages the console serves)',
    '.TP',
    '.I /usr/lib/palisade\\-console/better_sqlite3.node',
    'the SQLite addon the executable loads',
    '.SH SEE ALSO',
    '.BR systemctl (1),',
    '.I /usr/share/doc/palisade\\-console/deploy.md',
    '',
  ].join('\n');
}
