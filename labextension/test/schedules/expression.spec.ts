// Times are the browser's local times, whatever the zone the tests run in.

import {
  DEFAULT_CHOICE,
  IRepeatChoice,
  choiceNote,
  fromExpression,
  localIso,
  parseTime,
  sameChoice,
  toExpression
} from '../../src/schedules/expression';

const NOW = new Date(2026, 11, 1, 9, 10, 30);

/** A local time of December 2026 as the interval's start. */
function at(day: number, hours: number, minutes: number): string {
  return localIso(new Date(2026, 11, day, hours, minutes));
}

function choice(fields: Partial<IRepeatChoice>): IRepeatChoice {
  return { ...DEFAULT_CHOICE, ...fields };
}

describe('toExpression', () => {
  it.each<[Partial<IRepeatChoice>, string]>([
    [{ kind: 'minutes', every: 15 }, '*/15 * * * *'],
    [{ kind: 'minutes', every: 1 }, '* * * * *'],
    [{ kind: 'hours', every: 6, minute: 0 }, '0 */6 * * *'],
    [{ kind: 'hours', every: 1, minute: 20 }, '20 * * * *'],
    [{ kind: 'days', every: 1, time: '06:30' }, '30 6 * * *'],
    [{ kind: 'weekly', weekdays: [3, 1], time: '08:00' }, '0 8 * * 1,3'],
    [
      { kind: 'weekly', weekdays: [0, 1, 2, 3, 4, 5, 6], time: '08:00' },
      '0 8 * * *'
    ],
    [{ kind: 'cron', cron: '  0  6 * *  1-5 ' }, '0 6 * * 1-5']
  ])('%j is %s', (fields, expected) => {
    expect(toExpression(choice(fields), NOW)).toBe(expected);
  });

  it('says every 2 days as an interval from the next 07:00, local', () => {
    expect(
      toExpression(choice({ kind: 'days', every: 2, time: '07:00' }), NOW)
    ).toBe(`R/${at(2, 7, 0)}/P2D`);
    // Later today when the time is still to come.
    expect(
      toExpression(choice({ kind: 'days', every: 3, time: '18:45' }), NOW)
    ).toBe(`R/${at(1, 18, 45)}/P3D`);
  });

  it('says hours and minutes cron cannot step evenly as intervals', () => {
    expect(
      toExpression(choice({ kind: 'hours', every: 5, minute: 0 }), NOW)
    ).toBe(`R/${at(1, 10, 0)}/PT5H`);
    expect(
      toExpression(choice({ kind: 'hours', every: 7, minute: 30 }), NOW)
    ).toBe(`R/${at(1, 9, 30)}/PT7H`);
    expect(toExpression(choice({ kind: 'minutes', every: 90 }), NOW)).toBe(
      `R/${at(1, 10, 0)}/PT90M`
    );
  });

  it('uses the offset of the start, not of now', () => {
    const june = new Date(2026, 5, 10, 12, 0);
    const start = new Date(2026, 5, 11, 7, 0);
    expect(
      toExpression(choice({ kind: 'days', every: 2, time: '07:00' }), june)
    ).toBe(`R/${localIso(start)}/P2D`);
  });

  it.each<[Partial<IRepeatChoice>, RegExp]>([
    [{ kind: 'minutes', every: 0 }, /whole number from 1/],
    [{ kind: 'minutes', every: 2.5 }, /whole number/],
    [{ kind: 'hours', every: 2, minute: 60 }, /0 to 59/],
    [{ kind: 'days', time: '25:00' }, /not a time of day/],
    [{ kind: 'weekly', weekdays: [] }, /at least one day/],
    [{ kind: 'cron', cron: '   ' }, /Type a cron line/]
  ])('refuses %j in words', (fields, message) => {
    expect(() => toExpression(choice(fields), NOW)).toThrow(message);
  });
});

describe('fromExpression', () => {
  it.each<[string, Partial<IRepeatChoice>]>([
    ['*/15 * * * *', { kind: 'minutes', every: 15 }],
    ['* * * * *', { kind: 'minutes', every: 1 }],
    ['0 */6 * * *', { kind: 'hours', every: 6, minute: 0 }],
    ['20 * * * *', { kind: 'hours', every: 1, minute: 20 }],
    ['30 6 * * *', { kind: 'days', every: 1, time: '06:30' }],
    ['0 8 * * 1,3', { kind: 'weekly', weekdays: [1, 3], time: '08:00' }],
    ['0 8 * * 7,1', { kind: 'weekly', weekdays: [0, 1], time: '08:00' }],
    [`R/${at(2, 7, 0)}/P2D`, { kind: 'days', every: 2, time: '07:00' }],
    [`R/${at(1, 10, 0)}/PT5H`, { kind: 'hours', every: 5, minute: 0 }],
    [`R/${at(1, 10, 0)}/PT90M`, { kind: 'minutes', every: 90 }]
  ])('reads %s back', (expression, fields) => {
    expect(sameChoice(fromExpression(expression), choice(fields))).toBe(true);
  });

  it.each([
    '0 6 * * 1-5',
    '*/7 * * * *',
    '0 */5 * * *',
    '0 6 1 * *',
    '@daily',
    'R5/2026-12-01T06:00:00Z/P1W',
    '61 * * * *'
  ])('leaves %s as a cron line', expression => {
    const read = fromExpression(expression);
    expect(read.kind).toBe('cron');
    expect(read.cron).toBe(expression);
  });

  it('round-trips what toExpression makes', () => {
    const choices: Partial<IRepeatChoice>[] = [
      { kind: 'minutes', every: 5 },
      { kind: 'hours', every: 3, minute: 15 },
      { kind: 'hours', every: 5, minute: 10 },
      { kind: 'days', every: 1, time: '23:59' },
      { kind: 'days', every: 4, time: '00:00' },
      { kind: 'weekly', weekdays: [0, 6], time: '12:00' }
    ];
    for (const fields of choices) {
      const made = choice(fields);
      expect(sameChoice(fromExpression(toExpression(made, NOW)), made)).toBe(
        true
      );
    }
  });
});

describe('helpers', () => {
  it('parses times of day', () => {
    expect(parseTime('6:05')).toEqual([6, 5]);
    expect(() => parseTime('6')).toThrow(/06:30/);
  });

  it('writes local ISO with the offset', () => {
    const when = new Date(2026, 0, 16, 0, 30);
    const text = localIso(when);
    expect(text).toMatch(/^2026-01-16T00:30:00[+-]\d\d:\d\d$/);
    expect(new Date(text).getTime()).toBe(when.getTime());
  });

  it('explains what cron cannot say', () => {
    expect(
      choiceNote(choice({ kind: 'days', every: 2, time: '07:00' }))
    ).toMatch(/Every 2 days counted from the next 07:00.*ISO-8601/);
    expect(choiceNote(choice({ kind: 'hours', every: 5, minute: 0 }))).toMatch(
      /across midnight/
    );
    expect(choiceNote(choice({ kind: 'days', every: 1 }))).toBeNull();
    expect(choiceNote(choice({ kind: 'hours', every: 6 }))).toBeNull();
  });

  it('compares weekly choices whatever the order of days', () => {
    expect(
      sameChoice(
        choice({ kind: 'weekly', weekdays: [3, 1] }),
        choice({ kind: 'weekly', weekdays: [1, 3] })
      )
    ).toBe(true);
  });
});
