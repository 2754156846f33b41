/**
 * The GPU calls of the REST API: the latest sample, its history, and the
 * release of held GPU memory.
 */
import { ApiClient } from '../api/request';
import type { IGpuHistory, IGpuSnapshot, IReleaseResult } from '../api/types';

export class GpuClient extends ApiClient {
  /** The latest GPU and host-memory sample. */
  snapshot(): Promise<IGpuSnapshot> {
    return this.request('GET', 'gpu');
  }

  /** Past samples, oldest first; only the last `seconds` when given. */
  history(seconds?: number): Promise<IGpuHistory> {
    return this.request('GET', 'gpu/history', { query: { seconds } });
  }

  /** Shut down this server's kernels that hold GPU memory. */
  release(): Promise<IReleaseResult> {
    return this.request('POST', 'gpu/release', { body: {} });
  }
}
