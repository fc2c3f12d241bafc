import type { ConnectionCheck, DashboardData, TestServerRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useMutation } from '../../../lib/query';

export const testConnection = (input: TestServerRequest) =>
  request<DashboardData<'connection'>>('POST', '/api/servers/test', { body: input });

export const useTestConnection = () => useMutation(testConnection);

/** What a failed check means for the user, in one line, plus what to do about it. */
export function explainCheck(check: ConnectionCheck): { ok: boolean; title: string; detail: string } {
  if (!('error' in check))
    return {
      ok: true,
      title: 'Connected',
      detail: `Agent ${check.agent_version ?? ''} answered in ${check.latency_ms} ms.`.replace('  ', ' '),
    };
  const error = check.error;
  if (error.startsWith('tls_fingerprint: the agent presented'))
    return {
      ok: false,
      title: 'Certificate mismatch',
      detail: `${error.replace(/^tls_fingerprint:\s*/, '')}. If the agent made a new certificate, run \`palisade-agent info\` on the server and enter the fingerprint it shows; otherwise this is not your agent.`,
    };
  if (error.startsWith('tls_fingerprint:'))
    return {
      ok: false,
      title: 'Certificate not trusted',
      detail: `${error.replace(/^tls_fingerprint:\s*/, '')}. Enter the TLS fingerprint the agent printed.`,
    };
  if (!check.reachable && error.startsWith('forbidden address'))
    return {
      ok: false,
      title: 'Forbidden address',
      detail: `The console may not call this address. ${error.replace(/^forbidden address:\s*/, '')}`,
    };
  if (!check.reachable)
    return {
      ok: false,
      title: 'Unreachable',
      detail: `The console could not reach the agent. Check the address, the port and any firewall. (${error.replace(/^agent unreachable:\s*/, '')})`,
    };
  if (check.status === 401)
    return {
      ok: false,
      title: 'Wrong key',
      detail: 'The agent rejected the key. Run `palisade-agent key` on the server and paste the new key.',
    };
  if (check.status === 403)
    return {
      ok: false,
      title: 'Forbidden address',
      detail: "The agent refused the console's address. Add it to metrics.whitelist in the agent config.",
    };
  return { ok: false, title: 'Not an agent', detail: error || `The address answered HTTP ${check.status}.` };
}
