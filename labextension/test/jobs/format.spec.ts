/**
 * How the Jobs section writes times, resources, queues and GPU use.
 */
import type {
  IBackendUsage,
  IJob,
  IJobGpuUsage,
  IJobResources
} from '../../src/api/types';
import {
  describeGpuIdle,
  describeEfficiency,
  describeNoGpuHours,
  describeGpuUse,
  describeProgress,
  describeQueue,
  describeResources,
  elapsedSeconds,
  endedName,
  endedWord,
  formatBytesOf,
  formatClock,
  formatDuration,
  formatHours,
  formatStart,
  isActiveState,
  isGpuIdle,
  ordinal,
  progressFraction
} from '../../src/jobs/format';

const GIB = 1024 ** 3;

function job(overrides: Partial<IJob>): IJob {
  return {
    id: 'j1',
    name: 'train',
    state: 'queued',
    created_at: 1000,
    started_at: null,
    finished_at: null,
    queue_name: null,
    queue_position: null,
    estimated_start: null,
    progress: { cells_done: 0, cells_total: 0 },
    gpu: null,
    ...overrides
  } as IJob;
}

function gpu(overrides: Partial<IJobGpuUsage>): IJobGpuUsage {
  return {
    available: true,
    samples: 10,
    devices: [
      { name: 'H100', mig_profile: null, memory_total_bytes: 80 * GIB }
    ],
    mean_utilization_percent: 23.4,
    peak_memory_bytes: 3.1 * GIB,
    memory_total_bytes: 80 * GIB,
    idle_seconds: 0,
    ...overrides
  } as IJobGpuUsage;
}

describe('times', () => {
  it('formatClock grows from m:ss to days', () => {
    expect(formatClock(7)).toBe('0:07');
    expect(formatClock(725)).toBe('12:05');
    expect(formatClock(3723)).toBe('1:02:03');
    expect(formatClock(2 * 86400 + 3 * 3600 + 4 * 60 + 5)).toBe('2 d 3:04:05');
    expect(formatClock(86400)).toBe('1 d 0:00:00');
    expect(formatClock(-5)).toBe('0:00');
    expect(formatClock(59.9)).toBe('0:59');
  });

  it('formatDuration rounds to seconds, minutes, hours', () => {
    expect(formatDuration(40)).toBe('40 s');
    expect(formatDuration(59.6)).toBe('1 min');
    expect(formatDuration(12 * 60 + 30)).toBe('12 min');
    expect(formatDuration(3600)).toBe('1 h');
    expect(formatDuration(3900)).toBe('1 h 5 min');
    expect(formatDuration(-1)).toBe('0 s');
  });

  it('elapsedSeconds counts the wait of a queued job, the run of the rest', () => {
    expect(elapsedSeconds(job({}), 1030)).toBe(30);
    expect(elapsedSeconds(job({ started_at: 1010 }), 1030)).toBe(20);
    expect(
      elapsedSeconds(job({ started_at: 1010, finished_at: 1015 }), 9999)
    ).toBe(5);
    expect(elapsedSeconds(job({ finished_at: 1004 }), 9999)).toBe(4);
  });

  it('formatStart shows the clock today, the date otherwise', () => {
    const at = new Date(2026, 5, 3, 14, 20).getTime() / 1000;
    expect(formatStart(at, at - 3600)).toBe('14:20');
    const later = formatStart(at + 2 * 86400, at);
    expect(later).toMatch(/ 14:20$/);
    expect(later).not.toBe('14:20');
  });
});

describe('how an ended job is named', () => {
  it('names a batch kernel an interactive session that ended', () => {
    const session = job({
      kind: 'kernel',
      name: 'kernel: fit',
      state: 'succeeded'
    });
    expect(`${endedName(session)} ${endedWord(session)}`).toBe(
      "Interactive session 'kernel: fit' ended"
    );
    const timedOut = job({ kind: 'kernel', name: 'kernel', state: 'failed' });
    expect(endedWord(timedOut)).toBe('failed');
  });
  it('names a notebook run a job', () => {
    const run = job({ kind: 'notebook', state: 'succeeded' });
    expect(`${endedName(run)} ${endedWord(run)}`).toBe("Job 'train' succeeded");
  });
});

describe('progress and state', () => {
  it('only queued and running jobs are active', () => {
    expect(isActiveState('queued')).toBe(true);
    expect(isActiveState('running')).toBe(true);
    expect(isActiveState('failed')).toBe(false);
  });

  it('counts cells, capped, once the runner has counted them', () => {
    expect(describeProgress(job({}))).toBeNull();
    expect(
      describeProgress(job({ progress: { cells_done: 3, cells_total: 8 } }))
    ).toBe('3 of 8 cells');
    expect(
      describeProgress(job({ progress: { cells_done: 9, cells_total: 8 } }))
    ).toBe('8 of 8 cells');
    expect(
      progressFraction(job({ progress: { cells_done: 2, cells_total: 8 } }))
    ).toBe(0.25);
    expect(progressFraction(job({ state: 'succeeded' }))).toBe(1);
    expect(progressFraction(job({}))).toBe(0);
  });
});

describe('usage', () => {
  it('formatHours keeps small numbers readable', () => {
    expect(formatHours(0)).toBe('0');
    expect(formatHours(Number.NaN)).toBe('0');
    expect(formatHours(0.004)).toBe('<0.01');
    expect(formatHours(0.05)).toBe('0.05');
    expect(formatHours(3.24)).toBe('3.2');
  });

  it('describeEfficiency is the used share of the measured hours', () => {
    const usage = { gpu_hours_measured: 2, gpu_hours_used: 0.84 };
    expect(describeEfficiency(usage as IBackendUsage)).toBe('42%');
    expect(
      describeEfficiency({ ...usage, gpu_hours_measured: 0 } as IBackendUsage)
    ).toBe('n/a');
  });
});

describe('resources and queues', () => {
  it('describeResources lists what was asked, a MIG slice before GPUs', () => {
    const res: IJobResources = {
      cpus: 4,
      memory_bytes: 8 * GIB,
      gpus: 1,
      mig_profile: null,
      time_limit_seconds: 3600
    };
    expect(describeResources(res)).toBe(
      '4 CPUs · 8 GiB memory · 1 GPU · limit 1:00:00'
    );
    expect(
      describeResources({
        ...res,
        cpus: 1,
        memory_bytes: 512 * 1024 ** 2,
        gpus: 2,
        mig_profile: '1g.10gb',
        time_limit_seconds: null
      })
    ).toBe('1 CPU · 512 MiB memory · MIG 1g.10gb');
    expect(
      describeResources({
        cpus: null,
        memory_bytes: null,
        gpus: 0,
        mig_profile: null,
        time_limit_seconds: null
      })
    ).toBe('');
  });

  it('ordinal follows English, teens included', () => {
    expect([1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 112].map(ordinal)).toEqual([
      '1st',
      '2nd',
      '3rd',
      '4th',
      '11th',
      '12th',
      '13th',
      '21st',
      '22nd',
      '101st',
      '112th'
    ]);
  });

  it('describeQueue says the place and the estimated start', () => {
    expect(describeQueue(job({}), 0)).toBeNull();
    expect(
      describeQueue(job({ queue_position: 1, queue_name: 'gpu' }), 0)
    ).toBe("next in queue 'gpu'");
    expect(describeQueue(job({ queue_position: 3 }), 0)).toBe('3rd in queue');
    expect(describeQueue(job({ queue_position: 0 }), 0)).toBeNull();
    const at = new Date(2026, 5, 3, 14, 20).getTime() / 1000;
    expect(
      describeQueue(job({ queue_position: 2, estimated_start: at }), at)
    ).toBe('2nd in queue, estimated start 14:20');
  });
});

describe('GPU use', () => {
  it('formatBytesOf writes both in the unit of the total', () => {
    expect(formatBytesOf(3.1 * GIB, 80 * GIB)).toBe('3.1 of 80 GiB');
    expect(formatBytesOf(12.345 * GIB, 40 * GIB)).toBe('12 of 40 GiB');
    expect(formatBytesOf(200 * 1024 ** 2, 512 * 1024 ** 2)).toBe(
      '200 of 512 MiB'
    );
  });

  it('describeGpuUse sums a job up, or is null without numbers', () => {
    expect(describeGpuUse(null)).toBeNull();
    expect(describeGpuUse(gpu({ available: false }))).toBeNull();
    expect(describeGpuUse(gpu({ samples: 0 }))).toBeNull();
    expect(describeGpuUse(gpu({}))).toBe('GPU 23% avg · 3.1 of 80 GiB peak');
    expect(
      describeGpuUse(
        gpu({
          devices: [
            { name: 'A100', mig_profile: '1g.10gb', memory_total_bytes: null }
          ],
          memory_total_bytes: 10 * GIB
        } as Partial<IJobGpuUsage>)
      )
    ).toBe('MIG 1g.10gb · 3.1 of 10 GiB peak');
    expect(
      describeGpuUse(
        gpu({
          devices: [gpu({}).devices[0], gpu({}).devices[0]],
          mean_utilization_percent: null,
          memory_total_bytes: null
        })
      )
    ).toBe('2 GPUs · 3.1 GiB peak');
  });

  it('isGpuIdle only for running jobs past a positive threshold', () => {
    const idle = gpu({ idle_seconds: 700 });
    expect(isGpuIdle(job({ state: 'running', gpu: idle }), 600)).toBe(true);
    expect(isGpuIdle(job({ state: 'running', gpu: idle }), 800)).toBe(false);
    expect(isGpuIdle(job({ state: 'running', gpu: idle }), 0)).toBe(false);
    expect(isGpuIdle(job({ state: 'succeeded', gpu: idle }), 600)).toBe(false);
    expect(
      isGpuIdle(
        job({ state: 'running', gpu: { ...idle, available: false } }),
        600
      )
    ).toBe(false);
  });
});

describe('an empty GPU-hours chart', () => {
  it('says why it has no bar, in a sentence', () => {
    expect(describeNoGpuHours(8)).toBe(
      'No GPU-hours in the last 8 weeks: no job that ended in them asked ' +
        'for a GPU. Jobs sent with one or more GPUs fill this chart as they ' +
        'finish.'
    );
  });
});

describe('describeGpuIdle', () => {
  const gpu = { idle_seconds: 12 } as IJobGpuUsage;
  it('counts a short idle time in seconds and nudges', () => {
    expect(
      describeGpuIdle({ name: 'train', message: 'Running on local.', gpu })
    ).toBe(
      "Job 'train' has left its GPU idle for 12 s. Cancel it if it no longer needs the GPU."
    );
  });
  it("gives the server's warning where the site cancels idle jobs", () => {
    const message =
      'Its GPU has been idle for 11 min: it will be cancelled in 4 min unless it uses the GPU again.';
    expect(describeGpuIdle({ name: 'train', message, gpu })).toBe(
      `Job 'train': ${message}`
    );
  });
});
