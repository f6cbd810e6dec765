// A message's images (shown inline) and files (named links with type and size), read with the console's key, never a key in a URL; browser (preact).
import { useEffect, useState } from "preact/hooks";
import { type ApiClient, ApiError, errorText } from "./api_client.ts";
import type { SnapshotMedium } from "../../lib/session/snapshot_media.ts";
import { isImage, mediumPath, mediumPlaceholder, sizeText } from "./media_text.ts";

/** The media of one message of session `sessionKey`. */
export function MediaList(
  props: { api: ApiClient; sessionKey: string; media: SnapshotMedium[] },
) {
  return (
    <ul class="media">
      {props.media.map((m, i) => (
        <li key={"id" in m ? m.id : m.url + i}>
          {!("id" in m)
            ? <span class="medium-gone">{mediumPlaceholder(m)}</span>
            : isImage(m)
            ? <_Image api={props.api} sessionKey={props.sessionKey} medium={m} />
            : <_File api={props.api} sessionKey={props.sessionKey} medium={m} />}
        </li>
      ))}
    </ul>
  );
}

type _Stored = Extract<SnapshotMedium, { id: string }>;

/** Why a read failed, for the placeholder's title: a medium gone (404) or another error. */
function _why(error: unknown): string {
  return error instanceof ApiError && error.status === 404 ? "no longer stored" : errorText(error);
}

/** An image, fetched as bytes into an object URL (the page's CSP allows `blob:` images). */
function _Image(props: { api: ApiClient; sessionKey: string; medium: _Stored }) {
  const [src, setSrc] = useState<string | null>(null);
  const [gone, setGone] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    let url: string | null = null;
    props.api.blob(mediumPath(props.sessionKey, props.medium.id), abort.signal)
      .then((blob) => {
        url = URL.createObjectURL(blob);
        setSrc(url);
      })
      .catch((e) => {
        if (!abort.signal.aborted) setGone(_why(e));
      });
    return () => {
      abort.abort();
      if (url) URL.revokeObjectURL(url);
    };
  }, [props.api, props.sessionKey, props.medium.id]);
  if (gone) return <span class="medium-gone" title={gone}>{mediumPlaceholder(props.medium)}</span>;
  return src
    ? (
      <img
        class="medium-image"
        src={src}
        alt={props.medium.name ?? "image"}
        data-id={props.medium.id}
      />
    )
    : <span class="medium-loading">{mediumPlaceholder(props.medium)}</span>;
}

/** A file as a link named with its type and size; opened, it is fetched and saved under its name. */
function _File(props: { api: ApiClient; sessionKey: string; medium: _Stored }) {
  const { medium } = props;
  const [gone, setGone] = useState<string | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const blob = await props.api.blob(mediumPath(props.sessionKey, medium.id));
      const url = URL.createObjectURL(blob);
      const a = document.createElement("a");
      a.href = url;
      a.download = medium.name ?? "file";
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
    } catch (e) {
      setGone(_why(e));
    }
  };
  if (gone) return <span class="medium-gone" title={gone}>{mediumPlaceholder(medium)}</span>;
  return (
    <a href="#" class="medium-file" data-id={medium.id} onClick={save}>
      <span class="name">{medium.name ?? "file"}</span>{" "}
      <span class="meta">({medium.type}, {sizeText(medium.size)})</span>
    </a>
  );
}
