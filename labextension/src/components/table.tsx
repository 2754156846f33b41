/**
 * A table in the extension's style (`jp-GpuEnv-table` and its own class):
 * one header row of column heads, then a row per item.
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
