/**
 * The ids of the pipeline commands (registered in commands.ts): what the
 * Jobs section's rows, the graph view, the send dialog and the file
 * browser call, without depending on how the commands are made.
 */
export namespace PipelineCommandIDs {
  /** The graph of the pipeline `{ id }` in the main area; without one, ask which. */
  export const open = 'jupyter-gpu-env:pipeline-open';
  /** Run the `*.pipeline.yaml` `{ path }`, or the one selected in the file browser. */
  export const runFile = 'jupyter-gpu-env:pipeline-run-file';
  /** Cancel the pipeline `{ id }` (asked first). */
  export const cancel = 'jupyter-gpu-env:pipeline-cancel';
}

/** What names a pipeline file. */
export const PIPELINE_FILE = /\.pipeline\.ya?ml$/i;
