/**
 * A table in the extension's style (`jp-GpuEnv-table` and its own class):
 * one header row of column heads, then a row per item; a head that sorts
 * its table by its column.
 */
import React from 'react';

export function DataTable(props: {
  /** The table's own class, beside `jp-GpuEnv-table`. */
  className: string;
  testId?: string;
  /** The header row's cells. */
  head: React.ReactNode;
  /** The body's rows. */
  children: React.ReactNode;
}): JSX.Element {
  return (
    <table
      className={`jp-GpuEnv-table ${props.className}`}
      data-testid={props.testId}
    >
      <thead>
        <tr>{props.head}</tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  );
}

/**
 * A column head that sorts by its column: a button with the column's name
 * and the order's mark (▲ ascending, ▼ descending), and `aria-sort`.
 */
export function SortableHead(props: {
  /** The head's `data-column`. */
  column: string;
  /** The head's `data-kind`, where the table tells kinds of column apart. */
  kind?: string;
  label: string;
  /** The button's tooltip. */
  title: string;
  /** How the table is sorted by this column; null when it is not. */
  sorted: 'ascending' | 'descending' | null;
  onSort: () => void;
}): JSX.Element {
  const { sorted } = props;
  return (
    <th
      data-column={props.column}
      data-kind={props.kind}
      aria-sort={sorted ?? 'none'}
    >
      <button
        type="button"
        className="jp-GpuEnv-sortButton"
        title={props.title}
        onClick={props.onSort}
      >
        {props.label}
        <span className="jp-GpuEnv-sortMark" aria-hidden="true">
          {sorted === 'descending' ? ' ▼' : sorted === 'ascending' ? ' ▲' : ''}
        </span>
      </button>
    </th>
  );
}
