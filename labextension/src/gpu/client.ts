/**
 * The GPU calls of the REST API: the latest sample, its history, the
 * release of held GPU memory, and the check of an environment's GPU access.
 */
import { ApiClient, enc } from '../api/request';
import type {
  IGpuAdvice,
  IGpuHistory,
  IGpuSnapshot,
  IReleaseResult,
  ITask
} from '../api/types';

export class GpuClient extends ApiClient {
  /** The latest GPU and host-memory sample. */
  snapshot(): Promise<IGpuSnapshot> {
    return this.request('GET', 'gpu');
  }

  /** Past samples, oldest first; only the last `seconds` when given. */
  history(seconds?: number): Promise<IGpuHistory> {
    return this.request('GET', 'gpu/history', { query: { seconds } });
  }

  /**
   * Right-size advice for a kernel's GPU memory on the local backend (an
   * arrow: the GPU panel passes it on as it is).
   */
  readonly kernelAdvice = (
    kernelId: string,
    signal?: AbortSignal
  ): Promise<IGpuAdvice> =>
    this.request('GET', 'jobs/advice', {
      query: { kernel_id: kernelId, backend: 'local' },
      signal
    });

  /** Shut down this server's kernels that hold GPU memory. */
  release(): Promise<IReleaseResult> {
    return this.request('POST', 'gpu/release', { body: {} });
  }

  /**
   * Start checking whether an environment sees the GPU, with its own Python:
   * answers the task (202), whose result is the check.
   */
  checkEnvironment(name: string): Promise<ITask> {
    return this.request('POST', `environments/${enc(name)}/gpu-check`, {
      body: {}
    });
  }
}
