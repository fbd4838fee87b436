/** The page's markup: a shell the script fills from /api/files. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>dsh-fs review</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
  <h1>dsh-fs review</h1>
  <span id="summary" aria-live="polite"></span>
  <label class="view">View
    <select id="view">
      <option value="unified">unified</option>
      <option value="split">side by side</option>
    </select>
  </label>
  <button id="reload" type="button" title="Read the sandbox's changes again">Reload</button>
  <button id="commit" type="button" disabled>Apply decisions</button>
</header>
<div id="status" role="status" hidden></div>
<main>
  <nav aria-label="Changed files"><ul id="file-list"></ul></nav>
  <section id="diffs" aria-label="Changes"></section>
</main>
<footer>Keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous hunk · <kbd>a</kbd> accept · <kbd>r</kbd> reject with a reason · <kbd>Enter</kbd> in a reason returns to the hunks</footer>
</body>
</html>
`;
