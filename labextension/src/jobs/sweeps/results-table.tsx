/**
 * A sweep's results as a table: one row per run, its parameters, recorded
 * values, state, duration and GPU energy (CO2e and cost beside it where any
 * run has them), sorted by any column, so which value cost least is one
 * sort; per run "Run again…" (the send dialog filled from it). A recorded
 * value named like a parameter is headed "value: <name>".
 */
import { ToolbarButtonComponent, runIcon } from '@jupyterlab/ui-components';
import React, { useRef, useState } from 'react';

import type { ISweepResults, ISweepRow } from '../../api/types';
import { DataTable, SortableHead } from '../../components/table';
import { formatClock } from '../format';
import { StateBadge } from '../../components/figures/badge';
import {
  describeCost,
  formatCo2e,
  formatCost,
  formatEnergy
} from '../run/energy';
import { formatValue, valueLabel } from './values';

/** A column of the table: a parameter, a recorded value, or a fact. */
interface IColumn {
  key: string;
  label: string;
  kind: 'parameter' | 'value' | 'state' | 'duration' | 'energy';
  get: (row: ISweepRow) => unknown;
  /** An energy column's cell: its text and tooltip. */
  show?: (row: ISweepRow) => { text: string; title?: string };
}

/** Energy always; CO2e and cost where any run has them (as in the CSV). */
function energyColumns(rows: ISweepRow[]): IColumn[] {
  const columns: IColumn[] = [
    {
      key: 'energy',
      label: 'energy',
      kind: 'energy',
      get: row => row.energy_joules,
      show: row =>
        row.energy_joules === null
          ? { text: '', title: 'Not measured' }
          : { text: formatEnergy(row.energy_joules) }
    }
  ];
  if (rows.some(row => row.co2e_grams !== null)) {
    columns.push({
      key: 'co2e',
      label: 'CO2e',
      kind: 'energy',
      get: row => row.co2e_grams,
      show: row => ({
        text: row.co2e_grams === null ? '' : formatCo2e(row.co2e_grams)
      })
    });
  }
  if (rows.some(row => row.cost !== null)) {
    columns.push({
      key: 'cost',
      label: 'cost',
      kind: 'energy',
      get: row => row.cost?.amount ?? null,
      show: row =>
        row.cost === null
          ? { text: '' }
          : { text: formatCost(row.cost), title: describeCost(row.cost) }
    });
  }
  return columns;
}

function columnsOf(results: ISweepResults): IColumn[] {
  return [
    ...results.parameter_columns.map((name): IColumn => ({
      key: `p:${name}`,
      label: name,
      kind: 'parameter',
      get: row => row.parameters[name]
    })),
    ...results.value_columns.map((name): IColumn => ({
      key: `v:${name}`,
      label: valueLabel(name, results.parameter_columns),
      kind: 'value',
      get: row => row.values[name]
    })),
    { key: 'state', label: 'state', kind: 'state', get: row => row.state },
    {
      key: 'duration',
      label: 'duration',
      kind: 'duration',
      get: row => row.duration_seconds
    },
    ...energyColumns(results.rows)
  ];
}

/** Numbers before text before the rest; missing values always last. */
export function compareValues(a: unknown, b: unknown): number {
  const missing = (v: unknown): boolean => v === undefined || v === null;
  if (missing(a) || missing(b)) {
    return missing(a) === missing(b) ? 0 : missing(a) ? 1 : -1;
  }
  if (typeof a === 'number' && typeof b === 'number') {
    return a - b;
  }
  const rank = (v: unknown): number =>
    typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2;
  if (rank(a) !== rank(b)) {
    return rank(a) - rank(b);
  }
  const text = (v: unknown): string =>
    typeof v === 'string' ? v : JSON.stringify(v);
  return text(a).localeCompare(text(b), undefined, { numeric: true });
}

interface ISort {
  key: string;
  descending: boolean;
}

function sortRows(
  rows: ISweepRow[],
  columns: IColumn[],
  sort: ISort | null
): ISweepRow[] {
  const column = sort && columns.find(c => c.key === sort.key);
  if (!sort || !column) {
    return rows;
  }
  const missing = (v: unknown): boolean => v === undefined || v === null;
  return [...rows].sort((a, b) => {
    const x = column.get(a);
    const y = column.get(b);
    if (missing(x) || missing(y)) {
      // Missing values stay last whichever way.
      return compareValues(x, y) || a.index - b.index;
    }
    const order = compareValues(x, y);
    return (sort.descending ? -order : order) || a.index - b.index;
  });
}

function Cell(props: { column: IColumn; row: ISweepRow }): JSX.Element {
  const { column, row } = props;
  const value = column.get(row);
  if (column.kind === 'state') {
    return (
      <td data-column={column.key} title={row.note ?? undefined}>
        <StateBadge state={row.state} testId={null} />
        {row.note ? <span className="jp-GpuEnv-sweepNote"> ⚠</span> : null}
      </td>
    );
  }
  if (column.kind === 'duration') {
    return (
      <td data-column={column.key} className="jp-GpuEnv-sweepNumber">
        {row.duration_seconds === null ? '' : formatClock(row.duration_seconds)}
      </td>
    );
  }
  if (column.show) {
    const { text, title } = column.show(row);
    return (
      <td
        data-column={column.key}
        className="jp-GpuEnv-sweepNumber"
        title={title}
      >
        {text}
      </td>
    );
  }
  const missing = value === undefined || value === null;
  // A value the server cut short: its beginning, marked, and where the whole is.
  const cut =
    column.kind === 'value' && (row.cut ?? []).includes(column.key.slice(2));
  return (
    <td
      data-column={column.key}
      data-value={missing ? undefined : JSON.stringify(value)}
      data-cut={cut ? 'true' : undefined}
      className={typeof value === 'number' ? 'jp-GpuEnv-sweepNumber' : ''}
      title={
        cut
          ? (row.note ?? `Cut short: the whole is in ${row.output_path}.`)
          : missing
            ? undefined
            : JSON.stringify(value, null, 1)
      }
    >
      {missing ? '' : formatValue(value)}
      {cut ? '…' : null}
    </td>
  );
}

export function Table(props: {
  results: ISweepResults;
  runAgain: (row: ISweepRow) => Promise<unknown>;
}): JSX.Element {
  const { results, runAgain } = props;
  const [sort, setSort] = useState<ISort | null>(null);
  const [busy, setBusy] = useState<Set<string>>(new Set());
  const columns = columnsOf(results);
  const rows = sortRows(results.rows, columns, sort);
  const toggle = (key: string): void =>
    setSort(
      sort?.key === key
        ? { key, descending: !sort.descending }
        : { key, descending: false }
    );
  const opening = useRef(new Set<string>());
  const rerun = async (row: ISweepRow): Promise<void> => {
    // One dialog per row at a time: a double click opens one.
    if (opening.current.has(row.job_id)) {
      return;
    }
    opening.current.add(row.job_id);
    setBusy(current => new Set(current).add(row.job_id));
    try {
      await runAgain(row);
    } finally {
      opening.current.delete(row.job_id);
      setBusy(current => {
        const next = new Set(current);
        next.delete(row.job_id);
        return next;
      });
    }
  };
  return (
    <div className="jp-GpuEnv-sweepTableBox">
      <DataTable
        className="jp-GpuEnv-sweepTable"
        testId="gpu-env-sweep-table"
        head={
          <>
            <th className="jp-GpuEnv-sweepIndex">#</th>
            {columns.map(column => {
              const sorted = sort?.key === column.key;
              return (
                <SortableHead
                  key={column.key}
                  column={column.key}
                  kind={column.kind}
                  label={column.label}
                  title={`Sort by ${column.label}${sorted && !sort.descending ? ', descending' : ''}`}
                  sorted={
                    sorted
                      ? sort.descending
                        ? 'descending'
                        : 'ascending'
                      : null
                  }
                  onSort={() => toggle(column.key)}
                />
              );
            })}
            <th>
              <span className="jp-GpuEnv-visuallyHidden">Actions</span>
            </th>
          </>
        }
      >
        {rows.map(row => (
          <tr
            key={row.job_id}
            data-testid="gpu-env-sweep-row"
            data-index={row.index}
            data-job-id={row.job_id}
            data-state={row.state}
          >
            <td className="jp-GpuEnv-sweepIndex">{row.index + 1}</td>
            {columns.map(column => (
              <Cell key={column.key} column={column} row={row} />
            ))}
            <td className="jp-GpuEnv-sweepActions">
              <ToolbarButtonComponent
                icon={runIcon}
                label="Run again…"
                tooltip="Run again: the send dialog with this run's values, to change before sending"
                disabledTooltip="Open…"
                aria-label={`Run again: run ${row.index + 1}`}
                enabled={!busy.has(row.job_id)}
                dataset={{ action: 'rerun' }}
                onClick={() => void rerun(row)}
              />
            </td>
          </tr>
        ))}
      </DataTable>
    </div>
  );
}
