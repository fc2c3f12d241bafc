/**
 * A User-Agent header in words ("Firefox on Linux") for the sessions list. Only the families a
 * person recognises; anything else is "Unknown browser", and a missing header is said so.
 */
const BROWSERS: [RegExp, string][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChromium\//, 'Chromium'],
  [/\b(Headless)?Chrome\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[0-9.]+.*Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
  [/^node\b|\bundici\b|^node-fetch/, 'Node.js'],
  [/^palisade\b/i, 'Palisade CLI'],
];

const SYSTEMS: [RegExp, string][] = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];

export function deviceInWords(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device (no User-Agent)';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1] ?? 'Unknown browser';
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  return system ? `${browser} on ${system}` : browser;
}
