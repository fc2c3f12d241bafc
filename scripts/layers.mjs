// The import rule of a package's source tree: each file belongs to a layer (by its top folder or
// file name), and may import only from its own layer or a lower one. docs/architecture.md lists the
// layers; packages/*/test/layers.test.ts hold each package to them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Every `.ts`/`.tsx` file under `dir`. */
function sources(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sources(path, out);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Relative imports of one file: static, `export … from` and dynamic `import('…')`. */
export function relativeImports(text) {
  const found = [];
  const pattern = /(?:\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)(['"])(\.{1,2}\/[^'"]+)\1/gm;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) found.push(m[2]);
  return found;
}

/**
 * The imports that run against `layers` (lowest first; each an array of top-level folder or file
 * names under `srcDir`). Returns `["from → to", …]`; a file outside every layer is reported too.
 */
export function layerViolations(srcDir, layers) {
  const root = resolve(srcDir);
  const layerOf = (file) => {
    const top = relative(root, file)
      .split(sep)[0]
      .replace(/\.tsx?$/, '');
    const index = layers.findIndex((names) => names.includes(top));
    return index;
  };
  const problems = [];
  for (const file of sources(root)) {
    const from = layerOf(file);
    const name = relative(root, file);
    if (from === -1) {
      problems.push(`${name}: in no layer`);
      continue;
    }
    for (const spec of relativeImports(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec).replace(/\.js$/, '.ts');
      if (!target.startsWith(root + sep)) continue;
      const to = layerOf(target);
      if (to > from) problems.push(`${name} → ${relative(root, target)}`);
    }
  }
  return problems;
}
