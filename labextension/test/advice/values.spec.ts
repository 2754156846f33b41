/**
 * Right-size advice, pure: the one button and when it shows, the "likely to
 * start soonest" line, how priorities and attempts read, and when a
 * kernel's GPU memory changed enough to ask again.
 */
import type {
  IGpuAdvice,
  IJobAttempt,
  IStartOption
} from '../../src/api/types';
import {
  adviceButton,
  attemptsSummary,
  describeStart,
  fieldsFor,
  offersChoice,
  priorityLabel,
  soonestLine,
  suggestionLabel,
  suggestionMatches,
  worthAsking
} from '../../src/advice/values';

const GB = 10 ** 9;

function advice(partial: Partial<IGpuAdvice>): IGpuAdvice {
  return {
    notebook_path: 'train.ipynb',
    backend: 'local',
    based_on: 'runs',
    runs: [],
    kernel: null,
    peak_memory_bytes: 3 * GB,
    peak_utilization_percent: null,
    headroom: 0.2,
    suggestion: { mig_profile: '1g.10gb', gpus: null, memory_bytes: 10 * GB },
    current: null,
    idle_percent: null,
    energy: null,
    sentence: 'The last 3 runs peaked at 3.1 GB: a 1g.10gb slice fits.',
    soonest: [],
    ...partial
  };
}

const option = (partial: Partial<IStartOption>): IStartOption => ({
  backend: 'slurm',
  queue: null,
  free: 2,
  queued_ahead: 0,
  sentence: 'slurm: 2 free 1g.10gb slices now; no job waiting.',
  ...partial
});

describe('the suggestion button', () => {
  it('names the slice, the GPUs or no GPU', () => {
    expect(
      suggestionLabel({
        mig_profile: '1g.10gb',
        gpus: null,
        memory_bytes: null
      })
    ).toBe('Use 1g.10gb');
    expect(
      suggestionLabel({ mig_profile: null, gpus: 1, memory_bytes: null })
    ).toBe('Use 1 GPU');
    expect(
      suggestionLabel({ mig_profile: null, gpus: 2, memory_bytes: null })
    ).toBe('Use 2 GPUs');
    expect(
      suggestionLabel({ mig_profile: null, gpus: 0, memory_bytes: null })
    ).toBe('Use no GPU');
  });

  it('fills a slice or a count, never both', () => {
    expect(
      fieldsFor({ mig_profile: '2g.20gb', gpus: null, memory_bytes: null })
    ).toEqual({ gpus: '', mig_profile: '2g.20gb' });
    expect(
      fieldsFor({ mig_profile: null, gpus: 1, memory_bytes: null })
    ).toEqual({ gpus: '1', mig_profile: '' });
  });

  it('is left out when the fields already ask for the suggestion', () => {
    const slice = advice({});
    expect(adviceButton(slice, { gpus: '1', mig_profile: '' })).toBe(
      'Use 1g.10gb'
    );
    expect(
      adviceButton(slice, { gpus: '', mig_profile: '1g.10gb' })
    ).toBeNull();
    const none = advice({
      suggestion: { mig_profile: null, gpus: 0, memory_bytes: null }
    });
    // An empty GPU count is no GPU, as the backend reads it.
    expect(adviceButton(none, { gpus: '', mig_profile: '' })).toBeNull();
    expect(adviceButton(none, { gpus: '0', mig_profile: '' })).toBeNull();
    expect(adviceButton(none, { gpus: '1', mig_profile: '' })).toBe(
      'Use no GPU'
    );
    expect(adviceButton(none, { gpus: '', mig_profile: '1g.10gb' })).toBe(
      'Use no GPU'
    );
    const one = { mig_profile: null, gpus: 1, memory_bytes: null };
    expect(suggestionMatches(one, { gpus: ' 1 ', mig_profile: '' })).toBe(true);
    expect(suggestionMatches(one, { gpus: '1', mig_profile: '1g.10gb' })).toBe(
      false
    );
  });

  it('is left out when nothing was measured or nothing fits', () => {
    const nothing = advice({ based_on: 'nothing', suggestion: null });
    expect(adviceButton(nothing, { gpus: '', mig_profile: '' })).toBeNull();
  });
});

describe('the soonest line', () => {
  it('says where it starts soonest, with a switch to another backend', () => {
    const line = soonestLine(advice({ soonest: [option({})] }), 'local');
    expect(line).toEqual({
      text: 'Likely to start soonest: slurm — 2 free 1g.10gb slices now; no job waiting',
      switchTo: 'slurm'
    });
  });

  it('has no switch when the backend chosen is the soonest', () => {
    const local = option({
      backend: 'local',
      sentence: 'local: needs no GPU; 1 job waiting.'
    });
    expect(soonestLine(advice({ soonest: [local] }), 'local')).toEqual({
      text: 'Likely to start soonest: local — needs no GPU; 1 job waiting',
      switchTo: null
    });
  });

  it('names the queue, and is left out without options or a suggestion', () => {
    expect(describeStart(option({ queue: 'gpu' }))).toBe(
      'slurm (gpu) — 2 free 1g.10gb slices now; no job waiting'
    );
    expect(soonestLine(advice({}), 'local')).toBeNull();
    expect(
      soonestLine(advice({ suggestion: null, soonest: [option({})] }), 'local')
    ).toBeNull();
  });
});

describe('priorities and attempts', () => {
  it('offers a choice only beyond normal', () => {
    const normal = {
      name: 'normal' as const,
      description: 'Runs until it ends.'
    };
    const opportunistic = {
      name: 'opportunistic' as const,
      description: 'May be stopped.'
    };
    expect(offersChoice(undefined)).toBe(false);
    expect(offersChoice([normal])).toBe(false);
    expect(offersChoice([normal, opportunistic])).toBe(true);
    expect(priorityLabel('opportunistic')).toBe('Opportunistic');
  });

  it('sums the attempts up as the server words it', () => {
    const attempt = (
      number: number,
      reason: IJobAttempt['reason']
    ): IJobAttempt => ({
      number,
      started_at: 0,
      ended_at: 60,
      reason,
      message: '',
      cells_done: 3,
      gpu_hours_allocated: null,
      gpu_hours_used: null,
      energy_joules: null,
      energy_source: null,
      resumed_at: 90
    });
    expect(attemptsSummary([])).toBe('');
    expect(attemptsSummary([attempt(1, 'preempted')])).toBe(
      'Preempted once, resumed'
    );
    expect(
      attemptsSummary([attempt(1, 'preempted'), attempt(2, 'preempted')])
    ).toBe('Preempted twice, resumed');
    expect(
      attemptsSummary([
        attempt(1, 'evicted'),
        attempt(2, 'node_lost'),
        attempt(3, 'evicted'),
        attempt(4, 'evicted')
      ])
    ).toBe('Evicted 3 times, lost with its node once, resumed');
  });
});

describe('when a kernel is asked about again', () => {
  const MIB = 1024 ** 2;
  it('asks once a kernel holds memory, then only after a large change', () => {
    expect(worthAsking(undefined, 0)).toBe(false);
    expect(worthAsking(undefined, 500 * MIB)).toBe(true);
    expect(worthAsking(2048 * MIB, 2100 * MIB)).toBe(false); // a poll's wobble
    expect(worthAsking(2048 * MIB, 2400 * MIB)).toBe(false); // under a quarter
    expect(worthAsking(2048 * MIB, 3000 * MIB)).toBe(true);
    expect(worthAsking(512 * MIB, 700 * MIB)).toBe(false); // under 256 MiB
    expect(worthAsking(4096 * MIB, 1024 * MIB)).toBe(true); // released most
  });
});
