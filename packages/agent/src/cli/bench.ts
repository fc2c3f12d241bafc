import { runSuite } from '../bench/suite.js';
import { type BenchmarkReport, fmt } from '../bench/types.js';
import { loadConfigFile } from '../config/config.js';
import type { CliContext, ConfigChoice } from './commands.js';

type Scores = Record<'cpu' | 'disk' | 'network' | 'stability' | 'total', number | null>;

/** The lines `palisade-agent bench` prints after the run: figures and score per section. */
export function describeRun(report: BenchmarkReport, scores: Scores): string[] {
  const m = report.measurements;
  const score = (s: number | null) => (s === null ? '' : `  score ${s.toFixed(1)}`);
  const row = (name: string, figures: string | null, s: number | null) =>
    `${name.padEnd(10)} ${figures ?? `not measured: ${report.skipped[name] ?? 'no reason given'}`}${score(s)}`;
  const h = report.hardware;
  return [
    row(
      'cpu',
      m.cpu &&
        `SHA-256 ${fmt(m.cpu.single_mb_s)} MB/s on one core, ${fmt(m.cpu.multi_mb_s)} MB/s on ${m.cpu.threads} thread(s)${m.cpu.compress_mb_s !== undefined ? `, deflate ${fmt(m.cpu.compress_mb_s)} MB/s` : ''}`,
      scores.cpu,
    ),
    row(
      'disk',
      m.disk &&
        `write ${fmt(m.disk.seq_write_mb_s)} MB/s (fsync), read ${fmt(m.disk.seq_read_mb_s)} MB/s, ${fmt(m.disk.rand_write_iops)} IOPS (4 KiB sync)`,
      scores.disk,
    ),
    row(
      'network',
      m.network &&
        `down ${fmt(m.network.down_mbit_s)} Mbit/s, up ${fmt(m.network.up_mbit_s)} Mbit/s, round trip ${m.network.latency_ms.toFixed(2)} ms`,
      scores.network,
    ),
    row(
      'stability',
      m.stability && `spread ${m.stability.cpu_cv_pct.toFixed(2)} %, steal ${m.stability.steal_pct.toFixed(2)} %`,
      scores.stability,
    ),
    `${'total'.padEnd(10)} ${scores.total === null ? 'nothing was measured' : `${scores.total.toFixed(1)} (weighted mean of the measured sections)`}`,
    `${'hardware'.padEnd(10)} ${h.cores} cores, ${h.mem_total_mb} MB${h.cpu_model ? `, ${h.cpu_model}` : ''}${h.arch ? `, ${h.arch}` : ''}; took ${(report.duration_ms / 1000).toFixed(1)} s`,
  ];
}

/**
 * `palisade-agent bench`: the suite on this host without a console (so no network section).
 * Progress goes to stderr; the result to stdout, as text or JSON `{report, scores}`.
 */
export async function benchCommand(
  ctx: CliContext & { progress: (line: string) => void },
  stateDir: string,
  choice: ConfigChoice,
  opts: { quick: boolean; json: boolean },
): Promise<void> {
  const config = loadConfigFile(choice.file, choice.explicit);
  const settings = { ...config.bench, dir: config.bench.dir ?? stateDir };
  const report = await runSuite({
    deps: ctx.deps,
    settings,
    quick: opts.quick,
    network: {
      skip: 'palisade-agent bench runs without a console; the network is measured in runs started from the console',
    },
    log: ctx.progress,
  });
  // The scales live with the report schema; loaded here only, so the daemon never carries zod.
  const { scoreBenchmark } = await import('@palisade/protocol');
  const scores = scoreBenchmark(report.measurements);
  if (opts.json) ctx.print(JSON.stringify({ report, scores }, null, 2));
  else for (const line of describeRun(report, scores)) ctx.print(line);
}
