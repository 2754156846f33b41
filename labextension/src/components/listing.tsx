/**
 * What a section says about its list besides the items: why the latest
 * listing failed (the previous list, if any, stays below), or that the
 * first answer is still awaited.
 */
import React from 'react';

import type { ApiError } from '../api/request';

export function ListingStatus(props: {
  /** What is listed, e.g. `images`. */
  what: string;
  error: ApiError | null;
  /** Whether no list has come yet. */
  pending: boolean;
}): JSX.Element {
  const { what, error } = props;
  return (
    <>
      {error && (
        <div className="jp-GpuEnv-error" role="alert">
          Could not list {what}: {error.message}
        </div>
      )}
      {props.pending && !error && (
        <div className="jp-GpuEnv-note">Looking for {what}…</div>
      )}
    </>
  );
}
