/**
 * The palette pickers' lines: name, state and when, newest first; only
 * active jobs to cancel, only ended ones to run again.
 */
import type { IJob, ISweep } from '../../../src/api/types';
import {
  describeWhen,
  jobChoices,
  sweepChoices
} from '../../../src/jobs/palette/choices';

/** Unix seconds of a local time on 3 June 2026. */
const at = (hours: number, minutes = 0): number =>
  new Date(2026, 5, 3, hours, minutes).getTime() / 1000;
const NOW = at(15);

const job = (
  id: string,
  state: IJob['state'],
  created: number,
  started: number | null = null,
  finished: number | null = null
): IJob =>
  ({
    id,
    name: `job-${id}`,
    state,
    created_at: created,
    started_at: started,
    finished_at: finished
  }) as IJob;

describe('describeWhen', () => {
  it('says when a job was sent, started or ended, as its state goes', () => {
    expect(describeWhen(job('q', 'queued', at(14, 20)), NOW)).toBe(
      'queued, sent 14:20'
    );
    expect(describeWhen(job('r', 'running', at(14, 20), at(14, 25)), NOW)).toBe(
      'running, started 14:25'
    );
    expect(
      describeWhen(job('f', 'failed', at(14, 20), at(14, 25), at(14, 31)), NOW)
    ).toBe('failed, ended 14:31');
    // Cancelled in the queue: never started, ended when cancelled.
    expect(
      describeWhen(job('c', 'cancelled', at(9), null, at(9, 5)), NOW)
    ).toBe('cancelled, ended 09:05');
  });

  it('names the day of another day', () => {
    const yesterday = new Date(2026, 5, 2, 9, 12).getTime() / 1000;
    const line = describeWhen(
      job('s', 'succeeded', yesterday, yesterday, yesterday),
      NOW
    );
    expect(line).toMatch(/^succeeded, ended .*2.* 09:12$/);
  });
});

describe('jobChoices', () => {
  const jobs = [
    job('old', 'succeeded', at(9), at(9), at(10)),
    job('new', 'queued', at(14, 50)),
    job('mid', 'running', at(12), at(12, 1)),
    job('bad', 'failed', at(13), at(13), at(13, 2))
  ];

  it('offers every job newest first, each with its state and when', () => {
    expect(jobChoices(jobs, 'any', NOW)).toEqual([
      { id: 'new', label: 'job-new — queued, sent 14:50' },
      { id: 'bad', label: 'job-bad — failed, ended 13:02' },
      { id: 'mid', label: 'job-mid — running, started 12:01' },
      { id: 'old', label: 'job-old — succeeded, ended 10:00' }
    ]);
  });

  it('offers only queued and running jobs to cancel', () => {
    expect(jobChoices(jobs, 'active', NOW).map(item => item.id)).toEqual([
      'new',
      'mid'
    ]);
  });

  it('offers only jobs that ended to run again', () => {
    expect(jobChoices(jobs, 'ended', NOW).map(item => item.id)).toEqual([
      'bad',
      'old'
    ]);
  });

  it('offers no interactive kernel session to run again', () => {
    const session = {
      ...job('kernel', 'succeeded', at(11), at(11), at(12)),
      kind: 'kernel'
    } as IJob;
    expect(
      jobChoices([...jobs, session], 'ended', NOW).map(item => item.id)
    ).toEqual(['bad', 'old']);
    // Still one to cancel while it runs, and to show the log of.
    const live = { ...session, state: 'running', finished_at: null } as IJob;
    expect(jobChoices([live], 'active', NOW).map(item => item.id)).toEqual([
      'kernel'
    ]);
    expect(jobChoices([session], 'any', NOW)).toHaveLength(1);
  });

  it('leaves the list it was given in its order', () => {
    jobChoices(jobs, 'any', NOW);
    expect(jobs.map(j => j.id)).toEqual(['old', 'new', 'mid', 'bad']);
  });
});

describe('sweepChoices', () => {
  it('offers the sweeps newest first with their state and when', () => {
    const sweeps = [
      {
        id: 'a',
        name: 'lr-scan',
        state: 'succeeded',
        created_at: at(10),
        finished_at: at(11)
      },
      {
        id: 'b',
        name: 'depth',
        state: 'running',
        created_at: at(14),
        finished_at: null
      }
    ] as ISweep[];
    expect(sweepChoices(sweeps, NOW)).toEqual([
      { id: 'b', label: 'depth — running, started 14:00' },
      { id: 'a', label: 'lr-scan — succeeded, ended 11:00' }
    ]);
  });
});
