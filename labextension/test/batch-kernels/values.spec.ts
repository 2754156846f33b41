/**
 * A notebook's batch kernel in words (times in the browser's local time),
 * which session is the notebook's, how often to ask, the walltime notice,
 * and the register dialog's request.
 */
import type { IBatchKernelSession } from '../../src/api/types';
import {
  RUNNING_INTERVAL,
  UNSEEN_INTERVAL,
  WAITING_INTERVAL,
  batchKernelRequest,
  defaultTarget,
  describeSessions,
  isBatchKernelName,
  notebookKernelName,
  pollInterval,
  sessionDetail,
  sessionFor,
  sessionWords,
  walltimeNotice,
  walltimeNoticeDue
} from '../../src/batch-kernels/values';

/** Unix seconds of a local time on 3 June 2026. */
const at = (hours: number, minutes = 0, seconds = 0): number =>
  new Date(2026, 5, 3, hours, minutes, seconds).getTime() / 1000;
const NOW = at(14);

const KERNEL = 'gpu-env-batch-torch-gpu';

function session(
  fields: Partial<IBatchKernelSession> = {}
): IBatchKernelSession {
  return {
    kernel_id: 'k1',
    kernel_name: KERNEL,
    job_id: 'j1',
    notebook_path: 'work/analysis.ipynb',
    state: 'running',
    words: '',
    queue_name: null,
    queue_position: null,
    pending_reason: null,
    estimated_start: null,
    node: null,
    started_at: null,
    ends_at: null,
    restarts: 0,
    reason: null,
    message: null,
    ...fields
  };
}

describe('sessionWords', () => {
  it('says where a waiting kernel stands in its queue, in local time', () => {
    const waiting = session({
      state: 'waiting',
      queue_name: 'gpu',
      queue_position: 3,
      estimated_start: at(14, 20)
    });
    expect(sessionWords(waiting, NOW)).toBe(
      "Waiting in queue 'gpu', 3rd, estimated start 14:20"
    );
  });

  it('leaves out what the backend does not say, and an estimate passed', () => {
    expect(
      sessionWords(session({ state: 'waiting', queue_position: 1 }), NOW)
    ).toBe('Waiting in the queue, 1st');
    expect(
      sessionWords(
        session({
          state: 'waiting',
          queue_name: 'local',
          estimated_start: at(13, 59)
        }),
        NOW
      )
    ).toBe("Waiting in queue 'local'");
  });

  it('names the day of an estimate on another day', () => {
    const words = sessionWords(
      session({
        state: 'waiting',
        queue_name: 'gpu',
        estimated_start: at(14, 20) + 86400
      }),
      NOW
    );
    expect(words).toMatch(/^Waiting in queue 'gpu', estimated start .+ 14:20$/);
    expect(words).not.toMatch(/start 14:20$/);
  });

  it('says the job is being submitted before it has an id', () => {
    expect(sessionWords(session({ state: 'waiting', job_id: null }), NOW)).toBe(
      'Submitting its job…'
    );
  });

  it('says where it starts and runs, and the walltime left', () => {
    expect(
      sessionWords(session({ state: 'starting', node: 'node01' }), NOW)
    ).toBe('Starting on node01…');
    expect(sessionWords(session({ state: 'starting' }), NOW)).toBe('Starting…');
    const running = session({ node: 'node01', ends_at: at(15, 52, 30) });
    expect(sessionWords(running, NOW)).toBe(
      'Running on node01 · 1 h 52 min left'
    );
    expect(sessionWords(session({ ends_at: at(14, 9) }), NOW)).toBe(
      'Running · 9 min left'
    );
    expect(sessionWords(session({ node: 'node01' }), NOW)).toBe(
      'Running on node01'
    );
    expect(sessionWords(session({ ends_at: at(13) }), NOW)).toBe(
      'Running · its walltime is reached'
    );
  });

  it('says why it ended', () => {
    expect(
      sessionWords(
        session({
          state: 'ended',
          reason: 'time_limit',
          message: 'Reached its walltime of 2 h.'
        }),
        NOW
      )
    ).toBe('Ended: Reached its walltime of 2 h.');
    expect(
      sessionWords(session({ state: 'ended', reason: 'cancelled' }), NOW)
    ).toBe('Ended (cancelled)');
    expect(sessionWords(session({ state: 'ended' }), NOW)).toBe('Ended');
  });
});

describe('sessionDetail', () => {
  it('says why it waits, or when its walltime ends, and its job', () => {
    expect(
      sessionDetail(
        session({ state: 'waiting', pending_reason: 'Waiting for a GPU.' }),
        NOW
      )
    ).toBe('Waiting for a GPU.\nJob j1');
    expect(
      sessionDetail(session({ ends_at: at(16, 20), restarts: 1 }), NOW)
    ).toBe(
      'Its walltime ends at 16:20; the kernel is stopped then.\n' +
        'Restarted 1 time in the same allocation.\nJob j1'
    );
  });
});

describe('sessionFor', () => {
  const path = 'work/analysis.ipynb';

  it("finds the notebook's session by its path while JupyterLab has no kernel", () => {
    const other = session({ kernel_id: 'k0', notebook_path: 'other.ipynb' });
    const own = session({ kernel_id: 'k2', state: 'waiting' });
    expect(sessionFor([other, own], null, path)).toBe(own);
    expect(sessionFor([other], null, path)).toBeNull();
  });

  it('finds it by its kernel id once JupyterLab has the kernel', () => {
    // The notebook was renamed: the kernel is still its.
    const own = session({ kernel_id: 'k2', notebook_path: 'old.ipynb' });
    const another = session({ kernel_id: 'k3' });
    expect(sessionFor([another, own], 'k2', path)).toBe(own);
  });

  it('prefers a new kernel waiting for the notebook to its old one that ended', () => {
    const ended = session({ kernel_id: 'k2', state: 'ended' });
    const again = session({ kernel_id: 'k4', state: 'waiting' });
    expect(sessionFor([ended, again], 'k2', path)).toBe(again);
    expect(sessionFor([ended], 'k2', path)).toBe(ended);
  });

  it('shows the last ended one for the path when nothing else is', () => {
    const first = session({ kernel_id: 'k1', state: 'ended' });
    const last = session({ kernel_id: 'k5', state: 'ended' });
    expect(sessionFor([first, last], null, path)).toBe(last);
  });
});

describe('notebookKernelName', () => {
  const specs = { python3: 'Python 3', [KERNEL]: 'torch · SLURM gpu · 2 h' };

  it("is the running kernel's once JupyterLab has one", () => {
    expect(
      notebookKernelName({
        running: KERNEL,
        displayName: 'torch · SLURM gpu · 2 h',
        preferred: 'python3',
        specs
      })
    ).toBe(KERNEL);
  });

  it('is the batch kernel being started, found by its display name', () => {
    expect(
      notebookKernelName({
        running: null,
        displayName: 'torch · SLURM gpu · 2 h',
        preferred: 'python3',
        specs
      })
    ).toBe(KERNEL);
    // A spec not read yet shows by its name.
    expect(
      notebookKernelName({
        displayName: 'gpu-env-batch-new',
        preferred: null,
        specs
      })
    ).toBe('gpu-env-batch-new');
  });

  it('is the preferred one otherwise', () => {
    expect(
      notebookKernelName({ displayName: 'No Kernel', preferred: KERNEL, specs })
    ).toBe(KERNEL);
    expect(
      notebookKernelName({
        displayName: 'Python 3',
        preferred: 'python3',
        specs
      })
    ).toBe('python3');
    expect(notebookKernelName({ displayName: 'Python 3', specs })).toBe('');
  });

  it('tells batch kernelspecs by their name', () => {
    expect(isBatchKernelName(KERNEL)).toBe(true);
    expect(isBatchKernelName('python3')).toBe(false);
    expect(isBatchKernelName(null)).toBe(false);
  });
});

describe('pollInterval', () => {
  it('asks often while the kernel waits or starts, slowly once it runs', () => {
    expect(pollInterval(session({ state: 'waiting' }), false)).toBe(
      WAITING_INTERVAL
    );
    expect(pollInterval(session({ state: 'starting' }), false)).toBe(
      WAITING_INTERVAL
    );
    expect(pollInterval(session(), true)).toBe(RUNNING_INTERVAL);
    expect(pollInterval(session({ state: 'ended' }), false)).toBe(
      RUNNING_INTERVAL
    );
  });

  it('asks often while JupyterLab starts a kernel not listed yet', () => {
    expect(pollInterval(null, true)).toBe(WAITING_INTERVAL);
    expect(pollInterval(null, false)).toBe(UNSEEN_INTERVAL);
    expect(WAITING_INTERVAL).toBeLessThan(RUNNING_INTERVAL);
  });
});

describe('the walltime notice', () => {
  const ends = at(16, 20);

  it('is due in the last ten minutes of a running kernel', () => {
    expect(walltimeNoticeDue(session({ ends_at: ends }), at(16, 9))).toBe(
      false
    );
    expect(walltimeNoticeDue(session({ ends_at: ends }), at(16, 10))).toBe(
      true
    );
    expect(walltimeNoticeDue(session({ ends_at: ends }), at(16, 19))).toBe(
      true
    );
    expect(walltimeNoticeDue(session({ ends_at: ends }), at(16, 21))).toBe(
      false
    );
    expect(
      walltimeNoticeDue(session({ state: 'ended', ends_at: ends }), at(16, 15))
    ).toBe(false);
    expect(walltimeNoticeDue(session(), at(16, 15))).toBe(false);
  });

  it("says the notebook, the end in the browser's time, and what to do", () => {
    expect(walltimeNotice('analysis.ipynb', ends, at(16, 10))).toBe(
      'The batch kernel of analysis.ipynb ends at 16:20 (its walltime); ' +
        'save your work.'
    );
  });
});

describe('describeSessions', () => {
  it('counts the kernels that have not ended', () => {
    expect(
      describeSessions([
        session({ state: 'waiting' }),
        session(),
        session({ state: 'waiting' }),
        session({ state: 'ended' })
      ])
    ).toBe('1 running · 2 waiting');
    expect(describeSessions([session({ state: 'ended' })])).toBe(
      'no kernel running'
    );
  });
});

describe('defaultTarget', () => {
  const environments = [
    { name: 'bare', has_ipykernel: false },
    { name: 'torch', has_ipykernel: true }
  ];
  const kernels = [{ name: KERNEL }, { name: 'python3' }];

  it("is the row's environment, else one that runs notebooks, else a kernel", () => {
    expect(defaultTarget({ environment: 'bare', environments, kernels })).toBe(
      'environment:bare'
    );
    expect(defaultTarget({ environments, kernels })).toBe('environment:torch');
    expect(defaultTarget({ environments: null, kernels })).toBe(
      'kernel:python3'
    );
    expect(defaultTarget({ environments: [], kernels: [] })).toBe('');
  });
});

describe('batchKernelRequest', () => {
  const fields = {
    target: 'environment:torch',
    backend: 'slurm',
    resources: { cpus: 4, mig_profile: '1g.10gb', time_limit: '2:00:00' },
    queue: 'gpu',
    priority: 'normal' as const,
    displayName: '  torch on a slice '
  };

  it('sends the time limit as the walltime, and the name trimmed', () => {
    expect(batchKernelRequest(fields)).toEqual({
      environment: 'torch',
      backend: 'slurm',
      resources: { cpus: 4, mig_profile: '1g.10gb' },
      walltime: '2:00:00',
      queue: 'gpu',
      priority: 'normal',
      display_name: 'torch on a slice'
    });
  });

  it("leaves out what is empty: the server's defaults", () => {
    expect(
      batchKernelRequest({
        ...fields,
        target: 'image:demo-python-3f2a-zstd',
        resources: {},
        queue: undefined,
        displayName: ' '
      })
    ).toEqual({
      image: 'demo-python-3f2a-zstd',
      backend: 'slurm',
      resources: {},
      priority: 'normal'
    });
  });

  it('asks for a runtime', () => {
    expect(() => batchKernelRequest({ ...fields, target: '' })).toThrow(
      'Choose what the kernel runs in.'
    );
  });
});
