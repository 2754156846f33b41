/**
 * IdleWarnings: the running jobs whose GPU has idled past the server's
 * `gpu_idle_seconds`, each announced once; the idle runs of collapsed
 * sweeps (not listed, named by their sweep) are asked one by one.
 */
import type { IJob } from '../../api/types';
import { JobsClient } from '../client';
import { isGpuIdle } from '../format';

export class IdleWarnings {
  constructor(
    private readonly _client: JobsClient,
    private readonly _threshold: () => number,
    private readonly _announce: (job: IJob) => void
  ) {}

  /** Look at the jobs `seen`, and at the sweeps' idle runs not among them. */
  async check(seen: IJob[], idleRuns: string[]): Promise<void> {
    const known = new Set(seen.map(job => job.id));
    const asked = idleRuns.filter(
      id => !known.has(id) && !this._warned.has(id)
    );
    const fetched = await Promise.all(
      asked.map(id => this._client.getJob(id).catch(() => null))
    );
    const jobs = [
      ...seen,
      ...fetched.filter((job): job is IJob => job !== null)
    ];
    for (const job of jobs) {
      if (!this._warned.has(job.id) && isGpuIdle(job, this._threshold())) {
        this._warned.add(job.id);
        this._announce(job);
      }
    }
  }

  private _warned = new Set<string>();
}
