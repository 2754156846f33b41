/**
 * The extension's icons, themed through JupyterLab's `jp-icon*` classes.
 */
import { LabIcon } from '@jupyterlab/ui-components';

/** A 24×24 icon drawn in JupyterLab's third icon colour. */
function icon(name: string, paths: string, evenOdd = false): LabIcon {
  const rule = evenOdd ? ' fill-rule="evenodd"' : '';
  const svgstr =
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    `<g class="jp-icon3" fill="#616161"${rule}>${paths}</g></svg>`;
  return new LabIcon({ name: `jupyter-gpu-env:${name}`, svgstr });
}

/** A graphics card: the sidebar tab and the GPU section. */
export const gpuIcon = icon(
  'gpu',
  '<path d="M1 4h2v16H1z"/>' +
    '<path d="M3 5h18a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H3zm2 2v8h16V7z"/>' +
    '<path d="M10 8a3 3 0 1 1 0 6 3 3 0 0 1 0-6zm0 2a1 1 0 1 0 0 2 1 1 0 0 0 0-2z"/>' +
    '<path d="M15 8.5h4V10h-4zm0 3.5h4v1.5h-4z"/>' +
    '<path d="M7 17h5v3H7zm6 0h5v3h-5z"/>',
  true
);

/** Stacked layers: conda environments. */
export const environmentsIcon = icon(
  'environments',
  '<path d="M12 2 1 7.5 12 13l11-5.5zm0 13.24L3.26 10.87 1 12l11 5.5L23 12l-2.26-1.13zm0 4.5-8.74-4.37L1 16.5 12 22l11-5.5-2.26-1.13z"/>'
);

/** A queue with a play mark: batch jobs. */
export const jobsIcon = icon(
  'jobs',
  '<path d="M4 4h16v3H4zm0 6.5h16v3H4zM4 17h10v3H4zm13.5-1.5 5 3-5 3z"/>'
);

/** A box: pack an environment into an image. */
export const packIcon = icon(
  'pack',
  '<path d="M12 2 3 6.5v11L12 22l9-4.5v-11zm0 2.24 6.26 3.13L12 10.5 5.74 7.37zM5 9l6 3v7.5l-6-3zm8 10.5V12l6-3v7.5z"/>'
);

/** One file standing for many: a packed image. */
export const imageFileIcon = icon(
  'image-file',
  '<path d="M6 2h9l5 5v13a2 2 0 0 1-2 2H6a2 2 0 0 1-2-2V4a2 2 0 0 1 2-2zm0 2v16h12V8h-4V4z"/>' +
    '<path d="M8 11h8v2H8zm0 3.5h8v2H8z"/>'
);

/** A paper plane leaving a stack of lines: send a notebook to a queue. */
export const sendToBatchIcon = icon(
  'send-to-batch',
  '<path d="M9 3.5 23 10 9 16.5l1.8-5.3L17 10l-6.2-1.2z"/>' +
    '<path d="M1 13h6v2H1zm0 3.5h9v2H1zM1 20h12v2H1z"/>'
);

/** The idle warning: a triangle in the theme's warning colour. */
export const idleWarningIcon = new LabIcon({
  name: 'jupyter-gpu-env:idle-warning',
  svgstr:
    '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
    '<path class="jp-icon-warn0" fill="#f57c00" d="M1 21h22L12 2zm12-3h-2v-2h2zm0-4h-2v-4h2z"/>' +
    '</svg>'
});

/** A kernel's box, the mark of its toggle drawn beside it. */
const KERNEL_BOX =
  '<path d="M1 3h16v12H1zm2 2v8h12V5z"/>' +
  '<path d="m5 6.5 3 2.5-3 2.5-1-1.2L5.8 9 4 7.7zM9 11h4v1.5H9z"/>';

/** Register a Jupyter kernel for an environment: a kernel with a plus. */
export const kernelRegisterIcon = icon(
  'kernel-register',
  KERNEL_BOX + '<path d="M18 14h2.5v3.5H24V20h-3.5v3.5H18V20h-3.5v-2.5H18z"/>'
);

/** Remove an environment's Jupyter kernel: a kernel with a minus. */
export const kernelUnregisterIcon = icon(
  'kernel-unregister',
  KERNEL_BOX + '<path d="M14.5 17.5H24V20h-9.5z"/>'
);

/** A scheduler linked to three workers: a Dask cluster. */
export const daskIcon = icon(
  'dask',
  '<path d="M12 2a3 3 0 1 1 0 6 3 3 0 0 1 0-6z"/>' +
    '<path d="M11 7.5h2v4.5h6.5v4H17.5v-2h-4.5v2h-2v-2H6.5v2h-2v-4H11z"/>' +
    '<path d="M3 16.5h5V22H3zm6.5 0h5V22h-5zm6.5 0h5V22h-5z"/>'
);
