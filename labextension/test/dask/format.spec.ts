/**
 * The Dask section's pure rules: workers lines, pending workers' places,
 * the inserted client code, the dashboard's address, the workers fields
 * a `dask_not_installed` refusal's details and how a cluster runs on its
 * backend (one allocation, worker jobs).
 */
import type { IDaskCluster, IDaskWorkers } from '../../src/api/types';
import {
  dashboardUrl,
  describeLayout,
  describePending,
  describeWorkers,
  isChanging,
  isLive,
  missingDask,
  pendingTitle,
  readWorkers,
  workerTexts
} from '../../src/dask/format';

function workers(patch: Partial<IDaskWorkers> = {}): IDaskWorkers {
  return {
    requested: 2,
    running: 2,
    pending: 0,
    pending_workers: [],
    started_total: 2,
    in_allocation: 0,
    ...patch
  };
}

function cluster(patch: Partial<IDaskCluster> = {}): IDaskCluster {
  return {
    id: '0123456789ab',
    name: 'analysis',
    backend: 'local',
    state: 'running',
    message: '',
    environment: null,
    kernel: 'python3',
    image: null,
    queue: null,
    scheduler_address: 'tcp://10.0.0.5:8786',
    dashboard: '/gpu-env/dask/0123456789ab/status',
    workers: workers(),
    layout: 'separate_jobs',
    adapt: null,
    resources: {
      cpus: 2,
      memory_bytes: null,
      gpus: null,
      mig_profile: null,
      time_limit_seconds: null
    },
    threads_per_worker: 2,
    walltime_seconds: 3600,
    lifetime_seconds: 3300,
    idle_timeout_seconds: 3600,
    created_at: 0,
    started_at: 1,
    ended_at: null,
    idle_since: null,
    worker_hours: 0,
    gpu_hours: 0,
    versions: { python: '3.12', distributed: '2026.8.0', dask_cuda: null },
    problems: [],
    ...patch
  } as IDaskCluster;
}

describe('describeWorkers', () => {
  it('counts running and pending workers', () => {
    expect(describeWorkers(workers())).toBe('2 running');
    expect(
      describeWorkers(workers({ requested: 3, running: 2, pending: 1 }))
    ).toBe('2 running · 1 pending');
    expect(
      describeWorkers(workers({ requested: 2, running: 0, pending: 2 }))
    ).toBe('2 pending');
    expect(describeWorkers(workers({ requested: 0, running: 0 }))).toBe(
      '0 running'
    );
  });

  it('says when fewer are there than asked, and adaptive bounds', () => {
    expect(describeWorkers(workers({ requested: 3 }))).toBe(
      '2 running (3 asked)'
    );
    expect(describeWorkers(workers(), { minimum: 0, maximum: 10 })).toBe(
      'adaptive 0–10: 2 running'
    );
  });
});

describe('pending workers', () => {
  it('says where each waits', () => {
    expect(
      describePending({
        name: 'w-1',
        state: 'queued',
        place: 1,
        reason: 'Priority'
      })
    ).toBe('w-1 — queued, next in the queue (Priority)');
    expect(
      describePending({ name: 'w-2', state: 'queued', place: 3, reason: null })
    ).toBe('w-2 — queued, 3rd in the queue');
    expect(
      describePending({
        name: 'w-3',
        state: 'queued',
        place: null,
        reason: null
      })
    ).toBe('w-3 — queued');
    expect(
      describePending({
        name: 'w-4',
        state: 'starting',
        place: null,
        reason: null
      })
    ).toBe('w-4 — starting, not joined yet');
  });

  it('lists them in the title, with those not listed counted', () => {
    const title = pendingTitle(
      workers({
        requested: 5,
        running: 2,
        pending: 3,
        pending_workers: [
          { name: 'w-3', state: 'queued', place: 2, reason: 'Resources' }
        ]
      })
    );
    expect(title.split('\n')).toEqual([
      'Pending workers:',
      'w-3 — queued, 2nd in the queue (Resources)',
      '… and 2 more'
    ]);
    expect(pendingTitle(workers())).toBe('2 workers joined the scheduler');
  });
});

describe('states', () => {
  it('tells changing and live clusters', () => {
    expect(isChanging(cluster({ state: 'starting' }))).toBe(true);
    expect(isChanging(cluster({ state: 'stopping' }))).toBe(true);
    expect(isChanging(cluster())).toBe(false);
    expect(isLive(cluster({ state: 'starting' }))).toBe(true);
    expect(isLive(cluster({ state: 'stopping' }))).toBe(false);
    expect(isLive(cluster({ state: 'failed' }))).toBe(false);
  });
});

describe('dashboardUrl', () => {
  it('puts a path under the base URL once', () => {
    expect(dashboardUrl('/', '/gpu-env/dask/ab/status')).toBe(
      '/gpu-env/dask/ab/status'
    );
    expect(dashboardUrl('/user/ann/', 'gpu-env/dask/ab/status')).toBe(
      '/user/ann/gpu-env/dask/ab/status'
    );
    expect(dashboardUrl('/user/ann/', '/user/ann/gpu-env/dask/ab/status')).toBe(
      '/user/ann/gpu-env/dask/ab/status'
    );
  });

  it('keeps the origin of a full base URL, and full dashboard URLs', () => {
    expect(
      dashboardUrl('http://hub:8888/user/ann/', '/gpu-env/dask/ab/status')
    ).toBe('http://hub:8888/user/ann/gpu-env/dask/ab/status');
    expect(dashboardUrl('/', 'https://dash.example/status')).toBe(
      'https://dash.example/status'
    );
  });
});

describe('readWorkers', () => {
  const fixed = (text: string) =>
    readWorkers({ adaptive: false, workers: text, minimum: '', maximum: '' });
  const adapt = (minimum: string, maximum: string) =>
    readWorkers({ adaptive: true, workers: '', minimum, maximum });

  it('reads a number of workers', () => {
    expect(fixed(' 3 ')).toEqual({ workers: 3 });
    expect(fixed('0')).toEqual({ workers: 0 });
    expect(() => fixed('')).toThrow('Workers: give a whole number');
    expect(() => fixed('1.5')).toThrow('whole number');
    expect(() => fixed('1001')).toThrow('between 0 and 1000');
  });

  it('reads adaptive bounds in order', () => {
    expect(adapt('0', '10')).toEqual({ adapt: { minimum: 0, maximum: 10 } });
    expect(() => adapt('5', '2')).toThrow('Minimum (5) is above maximum (2)');
    expect(() => adapt('0', '0')).toThrow('Maximum: between 1 and 1000');
  });

  it('starts the Scale dialog from the cluster as it stands', () => {
    expect(workerTexts(cluster())).toEqual({
      adaptive: false,
      workers: '2',
      minimum: '0',
      maximum: '2'
    });
    expect(
      workerTexts(cluster({ adapt: { minimum: 1, maximum: 8 } }))
    ).toMatchObject({ adaptive: true, minimum: '1', maximum: '8' });
  });
});

describe('missingDask', () => {
  it('reads the environment and the packages to add', () => {
    expect(
      missingDask([{ environment: 'analysis', add: ['distributed=2026.8'] }])
    ).toEqual({
      environment: 'analysis',
      packages: ['distributed=2026.8'],
      conda: ['distributed=2026.8'],
      pip: []
    });
    expect(
      missingDask([{ environment: 'analysis', packages: 'distributed' }])
    ).toEqual({
      environment: 'analysis',
      packages: ['distributed'],
      conda: ['distributed'],
      pip: []
    });
  });

  it('puts each package where the server says it comes from', () => {
    expect(
      missingDask([
        {
          environment: 'analysis',
          packages: ['distributed', 'bokeh'],
          conda: ['bokeh'],
          pip: ['distributed']
        }
      ])
    ).toEqual({
      environment: 'analysis',
      packages: ['distributed', 'bokeh'],
      conda: ['bokeh'],
      pip: ['distributed']
    });
  });

  it('asks for distributed when the details name nothing', () => {
    expect(missingDask(null)).toEqual({
      environment: null,
      packages: ['distributed'],
      conda: ['distributed'],
      pip: []
    });
  });
});

describe('describeLayout', () => {
  it('says one allocation, until when, and the worker jobs beyond it', () => {
    const one = (patch: Partial<IDaskWorkers>, started: number | null = null) =>
      describeLayout(
        cluster({
          layout: 'one_allocation',
          workers: workers(patch),
          started_at: started
        })
      );
    expect(one({ in_allocation: 2 })).toBe('one allocation');
    expect(one({ running: 3, pending: 1, in_allocation: 2 })).toBe(
      'one allocation + 2 worker jobs'
    );
    expect(one({ running: 2, in_allocation: 1 })).toBe(
      'one allocation + 1 worker job'
    );
    // it ends at its time limit (an hour here), counted from its start
    const start = new Date(2026, 11, 2, 13, 30).getTime() / 1000;
    expect(
      describeLayout(
        cluster({
          layout: 'one_allocation',
          started_at: start,
          workers: workers({ in_allocation: 2 })
        }),
        start + 60
      )
    ).toBe('one allocation until 14:30');
  });

  it('counts the worker jobs beside a scheduler of its own', () => {
    expect(
      describeLayout(cluster({ workers: workers({ running: 1, pending: 1 }) }))
    ).toBe('scheduler + 2 worker jobs');
    expect(describeLayout(cluster({ state: 'stopped' }))).toBe(
      'scheduler and worker jobs'
    );
    expect(describeLayout(cluster({ layout: 'processes' }))).toBe(
      'processes on this machine'
    );
  });
});
