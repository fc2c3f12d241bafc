import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

/**
 * Each built script, style and SVG compressed once, at the highest levels, beside itself (`.br`,
 * `.gz`): the console sends the one the browser accepts (packages/console/src/routes/web/index.ts).
 */
function precompress(): Plugin {
  return {
    name: 'palisade-precompress',
    apply: 'build',
    writeBundle(options) {
      const dir = join(options.dir ?? 'dist', 'assets');
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const bytes = readFileSync(join(dir, name));
        writeFileSync(
          join(dir, `${name}.br`),
          brotliCompressSync(bytes, {
            params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
          }),
        );
        writeFileSync(join(dir, `${name}.gz`), gzipSync(bytes, { level: 9 }));
      }
    },
  };
}

export default defineConfig({
  base: '/',
  plugins: [react(), precompress()],
  // Source maps are built beside the bundle, without the comment that points a browser at them:
  // the console serves them only with PALISADE_WEB_SOURCE_MAPS=1.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: 'hidden' },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
