// A drop target for files (the `.drop` box, `.dragging` while files hover over it), for
// the pages that take files from the desktop: the import's archive, the vault's uploads.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

export function DropZone(props: { onFiles: (files: File[]) => void; children: ComponentChildren }) {
  const [dragging, setDragging] = useState(false);
  return (
    <div
      class={`drop${dragging ? " dragging" : ""}`}
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(e) => {
        e.preventDefault();
        setDragging(false);
        props.onFiles([...(e.dataTransfer?.files ?? [])]);
      }}
    >
      {props.children}
    </div>
  );
}
