/**
 * The extension's icons, themed through JupyterLab's `jp-icon*` classes.
 */
import { LabIcon } from '@jupyterlab/ui-components';

const GPU_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <g class="jp-icon3" fill="#616161" fill-rule="evenodd">
    <path d="M1 4h2v16H1z"/>
    <path d="M3 5h18a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H3zm2 2v8h16V7z"/>
    <path d="M10 8a3 3 0 1 1 0 6 3 3 0 0 1 0-6zm0 2a1 1 0 1 0 0 2 1 1 0 0 0 0-2z"/>
    <path d="M15 8.5h4V10h-4zm0 3.5h4v1.5h-4z"/>
    <path d="M7 17h5v3H7zm6 0h5v3h-5z"/>
  </g>
</svg>`;

const ENVIRONMENTS_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M12 2 1 7.5 12 13l11-5.5zm0 13.24L3.26 10.87 1 12l11 5.5L23 12l-2.26-1.13zm0 4.5-8.74-4.37L1 16.5 12 22l11-5.5-2.26-1.13z"/>
</svg>`;

const JOBS_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M4 4h16v3H4zm0 6.5h16v3H4zM4 17h10v3H4zm13.5-1.5 5 3-5 3z"/>
</svg>`;

/** A graphics card: the sidebar tab and the GPU section. */
export const gpuIcon = new LabIcon({
  name: 'jupyter-gpu-env:gpu',
  svgstr: GPU_SVG
});

/** Stacked layers: conda environments. */
export const environmentsIcon = new LabIcon({
  name: 'jupyter-gpu-env:environments',
  svgstr: ENVIRONMENTS_SVG
});

/** A queue with a play mark: batch jobs. */
export const jobsIcon = new LabIcon({
  name: 'jupyter-gpu-env:jobs',
  svgstr: JOBS_SVG
});
