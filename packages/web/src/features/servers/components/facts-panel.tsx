import { QueryView } from '../../../components/states';
import { megabytes } from '../../../lib/format';
import { useServerSection } from '../api/get-server-section';

function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The agent's fact names in words (packages/agent/src/measure/facts.ts); an unknown name is shown as sent. */
const FACT_WORDS: Record<string, string> = {
  os: 'OS',
  kernel: 'Kernel',
  arch: 'Architecture',
  cores: 'CPU cores',
  hostname: 'Hostname',
  public_ip: 'Public IP',
};
const factWords = (key: string) => (Object.hasOwn(FACT_WORDS, key) ? FACT_WORDS[key]! : key.replaceAll('_', ' '));

/** What the daemon reported about the host in its check-ins. */
export function FactsPanel({ serverId }: { serverId: number }) {
  const query = useServerSection(serverId, 'facts');
  return (
    <section className="card" aria-labelledby="facts-title">
      <h2 id="facts-title">Facts</h2>
      <QueryView query={query} what="Loading facts">
        {(f) => {
          const { mem_total_mb, disks, ...rest } = f.facts;
          const rows: [string, string][] = [
            ['Hostname', show(f.hostname)],
            ['Public IP', show(f.public_ip)],
            ['Agent version', show(f.agent_version)],
            ...Object.entries(rest).map(([k, v]) => [factWords(k), show(v)] as [string, string]),
            ...(typeof mem_total_mb === 'number' ? [['Memory', megabytes(mem_total_mb)] as [string, string]] : []),
            ...(Array.isArray(disks)
              ? [
                  [
                    'Disks',
                    disks
                      .map((d: { mount?: string; total_mb?: number }) => `${d.mount ?? '?'} ${megabytes(d.total_mb)}`)
                      .join(', '),
                  ] as [string, string],
                ]
              : []),
          ];
          return Object.keys(f.facts).length === 0 && !f.hostname ? (
            <p className="muted">Nothing reported yet: facts arrive with the agent's first check-in.</p>
          ) : (
            <dl className="facts">
              {rows.map(([k, v]) => (
                <div key={k}>
                  <dt>{k}</dt>
                  <dd>{v}</dd>
                </div>
              ))}
            </dl>
          );
        }}
      </QueryView>
    </section>
  );
}
