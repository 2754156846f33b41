/**
 * The send dialog's "Repeat" choice and the schedule expression it stands
 * for, both ways (pure).
 *
 * What cron says exactly becomes a cron line: every 15 minutes is
 * `*\/15 * * * *`, every 6 hours `0 *\/6 * * *`, every day at 06:30
 * `30 6 * * *`, Monday and Wednesday at 08:00 `0 8 * * 1,3`. What cron cannot
 * say honestly (every 2 days: cron's `*\/2` in the day field starts again on
 * the 1st of each month; every 5 hours: again at midnight) becomes an
 * ISO-8601 repeating interval counted from the next such time in the
 * browser's zone, `R/2026-12-01T07:00:00+01:00/P2D`, and the dialog says so
 * (`choiceNote`).
 */

export type RepeatKind = 'minutes' | 'hours' | 'days' | 'weekly' | 'cron';

export interface IRepeatChoice {
  kind: RepeatKind;
  /** Every how many minutes, hours or days. */
  every: number;
  /** For `hours`: the minute past the hour (0-59). */
  minute: number;
  /** For `days` and `weekly`: the time of day, `HH:MM`. */
  time: string;
  /** For `weekly`: the days, 0 Sunday … 6 Saturday, as cron numbers them. */
  weekdays: number[];
  /** For `cron`: the line as typed (an ISO interval is taken too). */
  cron: string;
}

/** The dialog's first choice: every day at 06:00. */
export const DEFAULT_CHOICE: IRepeatChoice = {
  kind: 'days',
  every: 1,
  minute: 0,
  time: '06:00',
  weekdays: [1],
  cron: ''
};

/** Monday first, as people read a week; cron's numbers. */
export const WEEKDAYS: readonly (readonly [number, string])[] = [
  [1, 'Mon'],
  [2, 'Tue'],
  [3, 'Wed'],
  [4, 'Thu'],
  [5, 'Fri'],
  [6, 'Sat'],
  [0, 'Sun']
];

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `HH:MM` as hours and minutes; throws when it is no time of day. */
export function parseTime(time: string): [number, number] {
  const match = /^(\d{1,2}):(\d{2})$/.exec(time.trim());
  const hours = match ? Number(match[1]) : NaN;
  const minutes = match ? Number(match[2]) : NaN;
  if (!(hours >= 0 && hours <= 23 && minutes >= 0 && minutes <= 59)) {
    throw new Error(`“${time}” is not a time of day: write it as 06:30.`);
  }
  return [hours, minutes];
}

function whole(value: number, what: string, max: number): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new Error(`Every how many ${what}: a whole number from 1 to ${max}.`);
  }
  return value;
}

/** A local time as ISO-8601 with the browser's offset: `2026-12-01T07:00:00+01:00`. */
export function localIso(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:00` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** The first time after `now` whose clock reads `hours:minutes` (hours null: any hour). */
function nextAt(now: Date, hours: number | null, minutes: number): Date {
  const at = new Date(now.getTime());
  at.setSeconds(0, 0);
  at.setMinutes(minutes);
  if (hours !== null) {
    at.setHours(hours, minutes);
  }
  while (at.getTime() <= now.getTime()) {
    if (hours === null) {
      at.setHours(at.getHours() + 1, minutes);
    } else {
      at.setDate(at.getDate() + 1);
      at.setHours(hours, minutes);
    }
  }
  return at;
}

/**
 * The expression for `choice`: a cron line where cron says it exactly,
 * else an ISO-8601 interval from the next such time after `now` (local).
 * Throws an Error in words when the choice is incomplete.
 */
export function toExpression(choice: IRepeatChoice, now: Date): string {
  switch (choice.kind) {
    case 'minutes': {
      const n = whole(choice.every, 'minutes', 10080);
      if (60 % n === 0) {
        return n === 1 ? '* * * * *' : `*/${n} * * * *`;
      }
      return `R/${localIso(nextAt(now, null, 0))}/PT${n}M`;
    }
    case 'hours': {
      const n = whole(choice.every, 'hours', 8760);
      const m = choice.minute;
      if (!Number.isInteger(m) || m < 0 || m > 59) {
        throw new Error('Minutes past the hour: a whole number from 0 to 59.');
      }
      if (24 % n === 0) {
        return n === 1 ? `${m} * * * *` : `${m} */${n} * * *`;
      }
      return `R/${localIso(nextAt(now, null, m))}/PT${n}H`;
    }
    case 'days': {
      const n = whole(choice.every, 'days', 3650);
      const [hours, minutes] = parseTime(choice.time);
      if (n === 1) {
        return `${minutes} ${hours} * * *`;
      }
      return `R/${localIso(nextAt(now, hours, minutes))}/P${n}D`;
    }
    case 'weekly': {
      const [hours, minutes] = parseTime(choice.time);
      const days = [...new Set(choice.weekdays.map(d => d % 7))].sort();
      if (days.length === 0) {
        throw new Error('Choose at least one day of the week.');
      }
      const field = days.length === 7 ? '*' : days.join(',');
      return `${minutes} ${hours} * * ${field}`;
    }
    case 'cron': {
      const line = choice.cron.trim().replace(/\s+/g, ' ');
      if (!line) {
        throw new Error(
          'Type a cron line (minute hour day month weekday, as 0 6 * * 1-5).'
        );
      }
      return line;
    }
  }
}

const NUMBER = '(\\d{1,2})';

/**
 * The dialog's choice for `expression`: what `toExpression` makes is read
 * back as the same choice; anything else is a cron line (advanced).
 */
export function fromExpression(expression: string): IRepeatChoice {
  const line = expression.trim().replace(/\s+/g, ' ');
  const base = { ...DEFAULT_CHOICE, weekdays: [...DEFAULT_CHOICE.weekdays] };
  const cron: IRepeatChoice = { ...base, kind: 'cron', cron: line };
  let match: RegExpExecArray | null;
  if (line === '* * * * *') {
    return { ...base, kind: 'minutes', every: 1 };
  }
  if ((match = /^\*\/(\d+) \* \* \* \*$/.exec(line))) {
    const n = Number(match[1]);
    return 60 % n === 0 && n > 0
      ? { ...base, kind: 'minutes', every: n }
      : cron;
  }
  if (
    (match = new RegExp(`^${NUMBER} \\*(?:/(\\d+))? \\* \\* \\*$`).exec(line))
  ) {
    const n = Number(match[2] ?? 1);
    const m = Number(match[1]);
    return 24 % n === 0 && n > 0 && m <= 59
      ? { ...base, kind: 'hours', every: n, minute: m }
      : cron;
  }
  match = new RegExp(
    `^${NUMBER} ${NUMBER} \\* \\* (\\*|[0-7](?:,[0-7])*)$`
  ).exec(line);
  if (match) {
    const [m, h] = [Number(match[1]), Number(match[2])];
    if (m > 59 || h > 23) {
      return cron;
    }
    const time = `${pad(h)}:${pad(m)}`;
    if (match[3] === '*') {
      return { ...base, kind: 'days', every: 1, time };
    }
    const weekdays = [
      ...new Set(match[3].split(',').map(d => Number(d) % 7))
    ].sort();
    return { ...base, kind: 'weekly', time, weekdays };
  }
  match = /^R\/([^/]+)\/P(T?)(\d+)([MHD])$/.exec(line);
  if (match) {
    const start = new Date(match[1]);
    const [, , timePart, count, unit] = match;
    const n = Number(count);
    if (Number.isNaN(start.getTime()) || n < 1) {
      return cron;
    }
    if (timePart === 'T' && unit === 'M' && start.getMinutes() === 0) {
      return { ...base, kind: 'minutes', every: n };
    }
    if (timePart === 'T' && unit === 'H') {
      return { ...base, kind: 'hours', every: n, minute: start.getMinutes() };
    }
    if (timePart === '' && unit === 'D') {
      const time = `${pad(start.getHours())}:${pad(start.getMinutes())}`;
      return { ...base, kind: 'days', every: n, time };
    }
  }
  return cron;
}

/** Whether two choices stand for the same schedule. */
export function sameChoice(a: IRepeatChoice, b: IRepeatChoice): boolean {
  if (a.kind !== b.kind) {
    return false;
  }
  switch (a.kind) {
    case 'minutes':
      return a.every === b.every;
    case 'hours':
      return a.every === b.every && a.minute === b.minute;
    case 'days':
      return a.every === b.every && a.time === b.time;
    case 'weekly':
      return (
        a.time === b.time &&
        [...a.weekdays].sort().join() === [...b.weekdays].sort().join()
      );
    case 'cron':
      return a.cron.trim() === b.cron.trim();
  }
}

/**
 * What the dialog says under a choice that cron cannot say exactly (it is
 * counted from the next such time, not from the calendar); null otherwise.
 */
export function choiceNote(choice: IRepeatChoice): string | null {
  const n = choice.every;
  if (choice.kind === 'days' && n > 1) {
    return (
      `Every ${n} days counted from the next ${choice.time}, across months ` +
      '(sent as an ISO-8601 interval: cron’s day steps start again on ' +
      'the 1st of each month).'
    );
  }
  if (choice.kind === 'hours' && n >= 1 && 24 % n !== 0) {
    return (
      `Every ${n} hours counted from the next :${pad(choice.minute)}, ` +
      'across midnight (sent as an ISO-8601 interval: cron’s hour steps ' +
      'start again each day).'
    );
  }
  if (choice.kind === 'minutes' && n >= 1 && 60 % n !== 0) {
    return (
      `Every ${n} minutes counted from the next whole hour, across hours ` +
      '(sent as an ISO-8601 interval: cron’s minute steps start again ' +
      'each hour).'
    );
  }
  return null;
}
