/**
 * Certificate pinning for agents that serve TLS with the certificate they made themselves
 * (packages/agent/src/state/tls-certificate.ts). Shared by the console's guarded client and the
 * SDK. Node only: import it as `@palisade/protocol/tls-pin`, it is not part of the package index.
 */
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';

/** The peer's certificate did not match the pin, or, without a pin, did not verify by the CA chain. */
export class TlsPinError extends Error {
  constructor(
    /** SHA-256 of the certificate the peer presented, `AB:CD:…`. */
    readonly presented: string,
    /** The pinned fingerprint, or null when there was no pin and the CA chain check failed. */
    readonly expected: string | null,
    /** Why the CA chain check failed (e.g. DEPTH_ZERO_SELF_SIGNED_CERT), when there was no pin. */
    readonly untrusted: string | null,
  ) {
    super(
      expected
        ? `the certificate's SHA-256 fingerprint is ${presented}, expected ${expected}`
        : `the certificate is not trusted (${untrusted}); its SHA-256 fingerprint is ${presented}`,
    );
    this.name = 'TlsPinError';
  }
}

/**
 * Waits for the TLS handshake of `socket` (opened with `rejectUnauthorized: false`) and hands it to
 * `done` only when the peer's certificate checks out: by its SHA-256 fingerprint when `pin` is set,
 * otherwise by the CA chain and host name. Until then nothing but the handshake has been written, so
 * a server with the wrong certificate never receives a request or its Authorization header. A
 * handshake that does not finish within `timeoutMs` destroys the socket.
 */
export function handOverWhenVerified(
  socket: TLSSocket,
  pin: string | null,
  done: (err: Error | null, socket?: Duplex) => void,
  timeoutMs = 30_000,
): void {
  const timer = setTimeout(() => socket.destroy(new Error('the TLS handshake did not finish')), timeoutMs);
  timer.unref();
  const onError = (err: Error) => {
    clearTimeout(timer);
    socket.off('secureConnect', onSecure);
    done(err);
  };
  const onSecure = () => {
    clearTimeout(timer);
    socket.off('error', onError);
    const presented = socket.getPeerCertificate()?.fingerprint256 ?? '(none)';
    let problem: TlsPinError | null = null;
    if (pin) {
      if (presented !== pin) problem = new TlsPinError(presented, pin, null);
    } else if (!socket.authorized) {
      problem = new TlsPinError(presented, null, String(socket.authorizationError ?? 'unverified'));
    }
    if (!problem) return done(null, socket);
    socket.destroy();
    done(problem);
  };
  socket.once('secureConnect', onSecure);
  socket.once('error', onError);
}
