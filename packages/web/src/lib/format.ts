/** Display helpers; every timestamp from the console is epoch milliseconds. */
export function timeAgo(ts: number | null | undefined, now = Date.now()): string {
  if (!ts) return 'never';
  const s = Math.round((now - ts) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function dateTime(ts: number | null | undefined): string {
  if (!ts) return '—';
  return new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function bitsPerSecond(bytesPerS: number | null | undefined): string {
  if (bytesPerS === null || bytesPerS === undefined) return '—';
  const bits = bytesPerS * 8;
  if (bits < 1000) return `${Math.round(bits)} bit/s`;
  if (bits < 1e6) return `${(bits / 1e3).toFixed(1)} kbit/s`;
  if (bits < 1e9) return `${(bits / 1e6).toFixed(1)} Mbit/s`;
  return `${(bits / 1e9).toFixed(2)} Gbit/s`;
}

export function megabytes(mb: number | null | undefined): string {
  if (mb === null || mb === undefined) return '—';
  return mb >= 1024 ? `${(mb / 1024).toFixed(1)} GB` : `${Math.round(mb)} MB`;
}

export function percent(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : `${Math.round(value)}%`;
}

export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100);
}

export type ScoreBand = 'good' | 'fair' | 'poor';

/** Score bands (0–1000): the colour and the word always go together. */
export function scoreBand(score: number): ScoreBand {
  if (score >= 800) return 'good';
  if (score >= 500) return 'fair';
  return 'poor';
}
