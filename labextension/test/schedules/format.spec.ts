import type { ISchedule, IScheduleRun } from '../../src/api/types';
import {
  describeNext,
  formatDue,
  formatIn,
  keeperNote,
  marksInOrder,
  runMark
} from '../../src/schedules/format';
import { schedule as record } from '../records';

// Monday 1 December 2026, 05:00 UTC.
const AT = Date.UTC(2026, 11, 1, 5, 0) / 1000;
const NOW = AT - 3 * 3600;

/** The records' schedule, due next at `AT`, in Rome's time. */
function schedule(fields: Partial<ISchedule> = {}): ISchedule {
  return record({
    timezone: 'Europe/Rome',
    next_runs: [{ at: AT, utc: '', local: '' }],
    ...fields
  });
}

function run(fields: Partial<IScheduleRun>): IScheduleRun {
  return {
    due_at: AT,
    outcome: 'started',
    job_id: 'j1',
    group_id: null,
    pipeline_id: null,
    state: 'succeeded',
    message: '',
    ...fields
  };
}

describe('formatDue', () => {
  it('writes the day, date and time in the zone', () => {
    expect(formatDue(AT, NOW, 'Europe/Rome')).toBe('Tue 1 Dec 06:00');
    expect(formatDue(AT, NOW, 'America/New_York')).toBe('Tue 1 Dec 00:00');
  });

  it('adds the year when it is not this one', () => {
    expect(formatDue(AT, NOW - 365 * 86400, 'UTC')).toBe(
      'Tue 1 Dec 2026 05:00'
    );
  });
});

describe('formatIn', () => {
  it.each([
    [0, 'due now'],
    [40, 'in 40 s'],
    [12 * 60, 'in 12 min'],
    [3 * 3600 + 5 * 60, 'in 3 h 5 min'],
    [30 * 3600, 'in 30 h'],
    [5 * 86400, 'in 5 days']
  ])('%d s ahead is %s', (ahead, text) => {
    expect(formatIn(NOW + ahead, NOW)).toBe(text);
  });
});

describe('describeNext', () => {
  it('gives the next run, or why there is none', () => {
    expect(describeNext(schedule(), NOW)).toMatch(/^Next .* \(in 3 h\)$/);
    expect(describeNext(schedule({ active: false }), NOW)).toMatch(/^Paused/);
    expect(describeNext(schedule({ next_runs: [] }), NOW)).toMatch(
      /No run left/
    );
  });
});

describe('runMark', () => {
  it('colours a started run by its job state and says when', () => {
    const mark = runMark(run({ state: 'failed' }), NOW);
    expect(mark.tone).toBe('error');
    expect(mark.title).toMatch(/started, failed$/);
    expect(runMark(run({ state: 'succeeded' }), NOW).tone).toBe('success');
  });

  it('says skipped and missed runs', () => {
    expect(
      runMark(run({ outcome: 'skipped', job_id: null, state: null }), NOW).title
    ).toMatch(/skipped, the previous run still ran/);
    const missed = runMark(
      run({
        outcome: 'missed',
        job_id: null,
        state: null,
        message: 'the server was down'
      }),
      NOW
    );
    expect(missed.tone).toBe('warn');
    expect(missed.title).toMatch(/missed: the server was down/);
  });

  it('orders marks oldest first, newest at the end', () => {
    const runs = [run({ due_at: 3 }), run({ due_at: 1 }), run({ due_at: 2 })];
    expect(marksInOrder(runs, 2).map(r => r.due_at)).toEqual([2, 3]);
  });
});

describe('keeperNote', () => {
  it('says a lost waiting job', () => {
    const lost = schedule({
      keeper: { kind: 'backend', handle: '12', present: false, message: '' }
    });
    expect(keeperNote(lost)?.level).toBe('lost');
    expect(keeperNote(schedule())).toBeNull();
    expect(keeperNote({ ...lost, active: false })).toBeNull();
  });

  it('says a server-kept schedule runs only while the server runs', () => {
    const local = schedule({
      keeper: { kind: 'server', handle: null, present: true, message: '' }
    });
    expect(keeperNote(local)?.text).toMatch(
      /^Runs only while this Jupyter server runs/
    );
  });
});
