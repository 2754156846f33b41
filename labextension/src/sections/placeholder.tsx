/**
 * Sections whose features come in later issues: they say so plainly, and
 * show no made-up data.
 */
import { LabIcon, ReactWidget } from '@jupyterlab/ui-components';
import React from 'react';

import { environmentsIcon, jobsIcon } from '../icons';

export namespace PlaceholderSection {
  export interface IOptions {
    /** The accordion title, e.g. "Environments". */
    label: string;
    /** Suffix of the test ids: `gpu-env-section-<key>`, `gpu-env-<key>-empty`. */
    key: string;
    icon: LabIcon;
    /** What the section will do, in one or two sentences. */
    message: string;
  }
}

/** An accordion section that shows an empty state. */
export class PlaceholderSection extends ReactWidget {
  constructor(private readonly _options: PlaceholderSection.IOptions) {
    super();
    this.addClass('jp-GpuEnv-section');
    this.title.label = _options.label;
    this.node.dataset.testid = `gpu-env-section-${_options.key}`;
  }

  protected render(): JSX.Element {
    const { icon, key, message } = this._options;
    return (
      <div className="jp-GpuEnv-sectionBody">
        <div className="jp-GpuEnv-empty" data-testid={`gpu-env-${key}-empty`}>
          <icon.react tag="span" className="jp-GpuEnv-emptyIcon" />
          <p className="jp-GpuEnv-emptyText">{message}</p>
        </div>
      </div>
    );
  }
}

/** "Environments": conda environment management (coming). */
export function createEnvironmentsSection(): PlaceholderSection {
  return new PlaceholderSection({
    label: 'Environments',
    key: 'environments',
    icon: environmentsIcon,
    message:
      'Environment management is coming: clone admin-managed conda ' +
      'environments and register them as kernels.'
  });
}

/** "Jobs": batch runs of notebooks (coming). */
export function createJobsSection(): PlaceholderSection {
  return new PlaceholderSection({
    label: 'Jobs',
    key: 'jobs',
    icon: jobsIcon,
    message:
      'Batch jobs are coming: send notebooks to run with papermill on this ' +
      'machine, SLURM or Kubernetes, and follow them here.'
  });
}
