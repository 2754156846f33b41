/**
 * BatchKernelsModel: the registered batch kernels with their sessions, as
 * the Jobs section's "Batch kernels" group and the palette's pickers show
 * them. Asked while the Jobs section is shown: every 15 s, every 2 s while
 * one of their kernels waits or starts.
 */
import type { IBatchKernel } from '../api/types';
import { PolledModel } from '../components/polled';
import { ACTIVE_INTERVAL, IDLE_INTERVAL, MAX_BACKOFF } from '../jobs/model';
import { BatchKernelsClient } from './client';

export class BatchKernelsModel extends PolledModel {
  constructor(readonly client: BatchKernelsClient) {
    super({
      name: 'jupyter-gpu-env:batch-kernels',
      interval: IDLE_INTERVAL,
      maxBackoff: MAX_BACKOFF,
      visible: () => this.viewed()
    });
  }

  /** Whether someone looks at the list (set by the Jobs section). */
  viewed: () => boolean = () => false;

  /** The batch kernels by display name, or null before the first answer. */
  get kernels(): IBatchKernel[] | null {
    return this._kernels;
  }

  find(kernelName: string): IBatchKernel | undefined {
    return this._kernels?.find(k => k.kernel_name === kernelName);
  }

  /** One just registered: listed at once. */
  add(kernel: IBatchKernel): void {
    const others = (this._kernels ?? []).filter(
      k => k.kernel_name !== kernel.kernel_name
    );
    this._kernels = [...others, kernel].sort((a, b) =>
      a.display_name.localeCompare(b.display_name)
    );
    this.emitChanged();
  }

  /**
   * Remove one (`shutdownKernels`: its kernels ended first), marked busy
   * meanwhile; the list is asked again after.
   */
  remove(kernelName: string, shutdownKernels: boolean): Promise<IBatchKernel> {
    return this.busyWhile(kernelName, async () => {
      const removed = await this.client.remove(kernelName, shutdownKernels);
      this._kernels =
        this._kernels?.filter(k => k.kernel_name !== kernelName) ?? null;
      return removed;
    });
  }

  protected async fetch(): Promise<void> {
    const page = await this.client.list();
    this._kernels = page.items;
    const changing = page.items.some(kernel =>
      kernel.sessions.some(
        session => session.state === 'waiting' || session.state === 'starting'
      )
    );
    this.interval = changing ? ACTIVE_INTERVAL : IDLE_INTERVAL;
  }

  private _kernels: IBatchKernel[] | null = null;
}
