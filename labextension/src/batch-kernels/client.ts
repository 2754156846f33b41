/**
 * The calls of the REST API about kernels on the batch system: register a
 * batch kernel (a kernelspec whose kernel runs as a job), list them with
 * their kernels now, read one, remove one, and cancel the job of a kernel
 * that waits. Starting one is Jupyter's own `POST api/sessions`.
 */
import { ApiClient, enc } from '../api/request';
import type {
  IBackendInfo,
  IBackendList,
  IBatchKernel,
  IBatchKernelList,
  IBatchKernelRequest,
  IClusterCapacity,
  IJob
} from '../api/types';

export class BatchKernelsClient extends ApiClient {
  /** The registered batch kernels, each with its sessions now. */
  list(limit = 100): Promise<IBatchKernelList> {
    return this.request('GET', 'batch-kernels', { query: { limit } });
  }

  /** One batch kernel and its sessions (waiting, starting, running, ended). */
  get(kernelName: string): Promise<IBatchKernel> {
    return this.request('GET', `batch-kernels/${enc(kernelName)}`);
  }

  /**
   * Register one: 201 with its kernelspec's name, in `api/kernelspecs` at
   * once; 404 or 409 with the server's words when it cannot run there.
   */
  create(request: IBatchKernelRequest): Promise<IBatchKernel> {
    return this.request('POST', 'batch-kernels', { body: request });
  }

  /**
   * Remove it (its kernelspec); 409 `kernels_running` while kernels of it
   * run or wait, unless `shutdownKernels`, which ends them first.
   */
  remove(kernelName: string, shutdownKernels = false): Promise<IBatchKernel> {
    return this.request('DELETE', `batch-kernels/${enc(kernelName)}`, {
      query: { shutdown_kernels: shutdownKernels }
    });
  }

  /** Cancel a session's job: a kernel that waits stops waiting. */
  cancelJob(jobId: string): Promise<IJob> {
    return this.request('POST', `jobs/${enc(jobId)}/cancel`);
  }

  /** What a backend could start now (the dialog's "Free now"). */
  capacity(backend: string): Promise<IClusterCapacity> {
    return this.request('GET', `backends/${enc(backend)}/capacity`);
  }

  /** The backends a batch kernel can run on. */
  async backends(): Promise<IBackendInfo[]> {
    return (await this.request<IBackendList>('GET', 'backends')).backends;
  }
}
