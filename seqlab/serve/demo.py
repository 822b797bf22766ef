"""``GET /`` of ``seqlab serve``: a page where a person types or pastes text and sees it tagged (or, for a relation
model, classified) in the view of :mod:`seqlab.render.html`, beside the model's card.

The page asks the service's own ``POST /tag`` (or ``/classify``) with ``fetch()``, so it passes the same limits
as any client. It loads nothing else: its one style and one script are inline, allowed by a per-response nonce in
a strict Content-Security-Policy (:func:`policy`), and its script writes the answer as text nodes, never as HTML.
"""
from __future__ import annotations

import html
import json
import secrets
from typing import Any

from seqlab.render.html import CSS, config_language, label_css, language_attributes

#: The demo's script: POST the text as the service expects it and draw the answer (``__PATH__``, ``__FIELD__``,
#: ``__TOKEN_LABELS__``: the endpoint, its request field and whether the model labels tokens, filled in as JSON).
SCRIPT = r"""
const path = __PATH__, field = __FIELD__, tokenLabels = __TOKEN_LABELS__;
const form = document.getElementById("form"), out = document.getElementById("out");
const say = document.getElementById("status");
function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
}
function mark(text, attr, label, title) {
  const node = el("mark", {"class": "ent", [attr]: label, "title": title}, text);
  node.appendChild(el("span", {"class": "lab"}, label));
  return node;
}
function drawDocument(doc) {
  const div = el("div", {"class": "doc"});
  if (tokenLabels) {
    for (const s of doc.sentences) s.tokens.forEach((t, i) => {
      const tok = el("span", {"class": "tok", "title": s.labels[i]}, t);
      tok.appendChild(el("span", {"class": "tag"}, s.labels[i]));
      div.appendChild(tok);
    });
    return div;
  }
  let cursor = 0;
  for (const s of doc.spans) {
    div.appendChild(document.createTextNode(doc.text.slice(cursor, s.start)));
    const title = s.label + " " + s.confidence.toFixed(3);
    div.appendChild(mark(doc.text.slice(s.start, s.end), "data-label", s.label, title));
    cursor = s.end;
  }
  div.appendChild(document.createTextNode(doc.text.slice(cursor)));
  if (doc.relations && doc.relations.length) {
    const list = el("ul", {"class": "rels"}), spanMark = (s) => mark(doc.text.slice(s.start, s.end), "data-label",
                                                                     s.label, s.label + " " + s.confidence.toFixed(3));
    for (const r of doc.relations) {
      const item = el("li", {"class": "rel"});
      item.appendChild(spanMark(doc.spans[r.head]));
      item.appendChild(el("span", {"class": "name"}, "→ " + r.label + " →"));
      item.appendChild(spanMark(doc.spans[r.tail]));
      item.appendChild(el("span", {"class": "conf"}, r.confidence.toFixed(3)));
      list.appendChild(item);
    }
    div.appendChild(list);
  }
  return div;
}
function drawRelation(text, rel) {
  const div = el("div", {"class": "doc rel"});
  const parts = text.split(/(<e[12]>[\s\S]*?<\/e[12]>)/);
  for (const part of parts) {
    const m = /^<(e[12])>([\s\S]*)<\/e[12]>$/.exec(part);
    div.appendChild(m ? mark(m[2], "data-role", m[1], m[1] + ": " + rel[m[1]]) : document.createTextNode(part));
  }
  div.appendChild(el("span", {"class": "name"}, rel.label));
  div.appendChild(el("span", {"class": "conf"}, rel.confidence.toFixed(3)));
  return div;
}
form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = document.getElementById("text").value;
  const lines = text.split("\n").filter(line => line.trim());
  say.textContent = "…";
  const body = field === "sentences" ? {sentences: lines} : {texts: lines};
  try {
    const answer = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"},
                                      body: JSON.stringify(body)});
    const data = await answer.json();
    if (!answer.ok) { say.textContent = answer.status + ": " + data.error; return; }
    out.replaceChildren(...(field === "sentences" ? data.relations.map((r, i) => drawRelation(lines[i], r))
                                                  : data.documents.map(drawDocument)));
    say.textContent = "done";
  } catch (err) { say.textContent = String(err); }
});
"""


def policy(nonce: str) -> str:
    """The page's Content-Security-Policy: everything from this server only, scripts and styles only the page's
    own (by ``nonce``), requests only to this origin, no frames, forms, plugins or base URL."""
    return (f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src 'self' data:; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def card_html(described: dict[str, Any]) -> str:
    """The model's card as a table: name, task, labels, language, and a packaged model's scores and best epoch
    (``described``: :meth:`seqlab.serve.service.ModelService.describe`)."""
    manifest = described.get("manifest") or {}
    scores = manifest.get("scores") or {}
    rows = [("model", described["model"]), ("task", described["task"]),
            ("labels", ", ".join(map(str, described["labels"]))),
            ("language", (described.get("config") or {}).get("data", {}).get("language", "not stated"))]
    rows += [(f"{split} score", f"{value:.2f}") for split, value in scores.items() if isinstance(value, (int, float))]
    if "best_epoch" in manifest:
        rows.append(("best epoch", manifest["best_epoch"]))
    cells = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    return f'<table class="card">{cells}</table>'


def demo_page(described: dict[str, Any], path: str, nonce: str, *, token_labels: bool = False) -> str:
    """The demo page of a served model (``path``: its POST endpoint; ``token_labels``: a POS tagger's, each
    word's tag shown under it) with ``nonce`` on its style and script. The page's own words are English; the
    text box and the answers under it are in the model's language (``lang``, and ``dir="rtl"`` for Arabic,
    Hebrew, ...: :func:`seqlab.render.html.language_attributes`)."""
    field = "sentences" if path == "/classify" else "texts"
    hint = ("one sentence a line, the entities marked &lt;e1&gt;…&lt;/e1&gt; and &lt;e2&gt;…&lt;/e2&gt;"
            if field == "sentences" else "one text a line")
    labels = described["labels"] if field == "texts" and not token_labels else ()
    script = (SCRIPT.replace("__PATH__", json.dumps(path)).replace("__FIELD__", json.dumps(field))
              .replace("__TOKEN_LABELS__", json.dumps(token_labels)))
    text = language_attributes(config_language(described.get("config")))  # what is typed and what comes back
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>seqlab: '
            f'{html.escape(described["model"])}</title><style nonce="{nonce}">{CSS}\n{label_css(labels)}\n'
            f'textarea{{width:100%;font:inherit;line-height:1.4}}</style></head><body>\n'
            f'<h1>seqlab serve: {html.escape(described["model"])}</h1>\n{card_html(described)}\n'
            f'<form id="form"><p><label for="text">Text ({hint}):</label></p>'
            f'<textarea id="text" rows="5" {text}></textarea><p><button type="submit" id="go">Tag</button> '
            f'<span id="status"></span></p></form>\n<div id="out" {text}></div>\n'
            f'<script nonce="{nonce}">{script}</script>\n</body></html>\n')


def new_nonce() -> str:
    """A fresh nonce for one response (128 random bits)."""
    return secrets.token_urlsafe(16)
