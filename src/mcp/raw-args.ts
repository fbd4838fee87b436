import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/** A key JSON can carry that the MCP SDK's parse of a call leaves out of its `arguments`. */
const DROPPED_KEY = '__proto__';

type RequestId = string | number;

/**
 * The SDK parses a call's `arguments` into a fresh record, which leaves out an own `__proto__`
 * key: the call would run as if the key were not there. The raw arguments of such calls are kept
 * here, by request id, so the registry refuses the key as it refuses any unknown one.
 */
export function keepDroppedArguments() {
  const kept = new Map<RequestId, unknown>();
  const note = (message: unknown) => {
    if (typeof message !== 'object' || message === null) return;
    const m = message as { method?: unknown; id?: unknown; params?: { arguments?: unknown } };
    const args = m.params?.arguments;
    if (m.method !== 'tools/call' || (typeof m.id !== 'string' && typeof m.id !== 'number')) return;
    if (typeof args === 'object' && args !== null && Object.hasOwn(args, DROPPED_KEY)) kept.set(m.id, args);
  };
  return {
    /** Sees each message before the server does: wraps the handler the server sets when it connects. */
    watch(transport: Transport): void {
      const start = transport.start.bind(transport);
      transport.start = async () => {
        const inner = transport.onmessage;
        if (inner !== undefined) {
          transport.onmessage = ((message: Parameters<typeof inner>[0], extra?: Parameters<typeof inner>[1]) => {
            note(message);
            inner(message, extra);
          }) as typeof inner;
        }
        await start();
      };
    },
    /** The raw arguments of call `id` when the SDK dropped a key of them (then forgotten). */
    take(id: RequestId): unknown {
      const args = kept.get(id);
      kept.delete(id);
      return args;
    },
  };
}
