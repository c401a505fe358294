// The /exchange page: sign in with a token, choose or drop a ZIP of the project, watch the upload and each file's
// state, download the result archive. One HTML page, its script and its style, all served by the service (no
// external assets, a strict Content-Security-Policy); it talks only to the API under the same origin.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { InteractiveSignIn } from '../../identity/oidc.js';

/** The page may talk to this service and, for the interactive sign-in, to the issuer's token endpoint. */
const csp = (tokenEndpoint?: string) =>
  `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'${tokenEndpoint ? ` ${new URL(tokenEndpoint).origin}` : ''}; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;

const CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --muted: #59636e; --line: #d1d9e0; --accent: #0969da; --ok: #1a7f37; --fail: #d1242f; }
@media (prefers-color-scheme: dark) { :root { --fg: #f0f6fc; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --accent: #4493f8; --ok: #3fb950; --fail: #f85149; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 1rem; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 1.5rem; }
label { display: block; font-weight: 600; margin: .5rem 0 .25rem; }
input[type=password], input[type=text] { width: 100%; max-width: 32rem; padding: .4rem; font: inherit; color: inherit; background: var(--bg); border: 1px solid var(--line); border-radius: 4px; }
button { font: inherit; padding: .4rem 1rem; margin-top: .5rem; border: 1px solid var(--accent); border-radius: 4px; background: var(--accent); color: #fff; cursor: pointer; }
button:disabled { opacity: .5; cursor: not-allowed; }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
#drop { border: 2px dashed var(--line); border-radius: 8px; padding: 1rem; margin: .5rem 0; }
#drop.over { border-color: var(--accent); }
.muted { color: var(--muted); }
[role=alert] { color: var(--fail); font-weight: 600; white-space: pre-wrap; }
progress { width: 100%; max-width: 32rem; height: 1rem; }
table { border-collapse: collapse; width: 100%; margin-top: .5rem; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
.Signed { color: var(--ok); font-weight: 600; } .Error { color: var(--fail); font-weight: 600; }
a.download { display: inline-block; margin-top: 1rem; font-weight: 600; color: var(--accent); }
`;

const SCRIPT = `'use strict';
(function () {
  var api = document.documentElement.getAttribute('data-api');
  var token = '';
  var chosen = null;
  var $ = function (id) { return document.getElementById(id); };
  function problemText(status, body) {
    if (body && typeof body === 'object') {
      var lines = [(body.title || ('HTTP ' + status)) + ': ' + (body.detail || '')];
      (body.errors || []).forEach(function (e) { lines.push(e.fileName + ': ' + e.detail); });
      return lines.join('\\n');
    }
    return 'HTTP ' + status + (body ? ': ' + String(body).slice(0, 300) : '');
  }
  function fail(text) { $('error').textContent = text; }
  async function call(path, init) {
    var res = await fetch(api + path, Object.assign({}, init, { headers: { authorization: 'Bearer ' + token, accept: 'application/json' } }));
    var type = res.headers.get('content-type') || '';
    var body = type.indexOf('json') >= 0 ? await res.json() : (type.indexOf('zip') >= 0 ? await res.blob() : await res.text());
    if (!res.ok) throw new Error(problemText(res.status, body));
    return body;
  }
  async function signIn(how) {
    try {
      var licenses = await call('/licenses');
      $('who').textContent = 'Signed in' + how + '. License options: ' + (licenses.map(function (l) { return l.optionId; }).join(', ') || 'none');
      $('upload').disabled = false;
      $('archive').focus();
    } catch (e) {
      token = '';
      $('who').textContent = 'Not signed in.';
      fail(e.message);
    }
  }
  $('signin').addEventListener('submit', function (event) {
    event.preventDefault();
    fail('');
    token = $('token').value.trim();
    signIn('');
  });
  // Interactive sign-in at the OpenID Connect issuer: authorization code with PKCE (RFC 7636), verifier and state
  // kept in sessionStorage for the round trip only.
  var oidc = document.documentElement.getAttribute('data-oidc');
  oidc = oidc ? JSON.parse(oidc) : null;
  function b64url(bytes) { return btoa(String.fromCharCode.apply(null, new Uint8Array(bytes))).replace(/[+]/g, '-').replace(/[/]/g, '_').replace(/=+$/, ''); }
  var redirectUri = location.origin + location.pathname;
  if (oidc) {
    $('oidc').hidden = false;
    $('oidc-button').addEventListener('click', async function () {
      var verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
      var state = b64url(crypto.getRandomValues(new Uint8Array(16)));
      sessionStorage.setItem('exchange.pkce', JSON.stringify({ verifier: verifier, state: state }));
      var challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
      var q = new URLSearchParams({ response_type: 'code', client_id: oidc.clientId, redirect_uri: redirectUri, scope: oidc.scopes.join(' '), state: state, code_challenge: challenge, code_challenge_method: 'S256' });
      location.assign(oidc.authorizationEndpoint + '?' + q.toString());
    });
    var back = new URLSearchParams(location.search);
    var pending = sessionStorage.getItem('exchange.pkce');
    if (pending && (back.get('code') || back.get('error'))) {
      sessionStorage.removeItem('exchange.pkce');
      history.replaceState(null, '', redirectUri);
      pending = JSON.parse(pending);
      (async function () {
        if (back.get('error')) return fail('Sign-in refused by ' + oidc.issuer + ': ' + back.get('error') + ' ' + (back.get('error_description') || ''));
        if (back.get('state') !== pending.state) return fail('Sign-in answer does not belong to this page (state mismatch); sign in again.');
        var res = await fetch(oidc.tokenEndpoint, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code: back.get('code'), redirect_uri: redirectUri, client_id: oidc.clientId, code_verifier: pending.verifier }) });
        var body = await res.json().catch(function () { return null; });
        if (!res.ok || !body || !body.access_token) return fail('Sign-in at ' + oidc.issuer + ' failed: ' + ((body && (body.error_description || body.error)) || ('HTTP ' + res.status)));
        token = body.access_token;
        signIn(' at ' + oidc.issuer);
      })();
    }
  }
  function choose(file) {
    chosen = file || null;
    $('chosen').textContent = chosen ? 'Chosen: ' + chosen.name + ' (' + chosen.size + ' bytes)' : 'No archive chosen.';
  }
  $('archive').addEventListener('change', function () { choose($('archive').files[0]); });
  var drop = $('drop');
  drop.addEventListener('dragover', function (event) { event.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', function () { drop.classList.remove('over'); });
  drop.addEventListener('drop', function (event) {
    event.preventDefault();
    drop.classList.remove('over');
    if (event.dataTransfer && event.dataTransfer.files.length) choose(event.dataTransfer.files[0]);
  });
  function render(status) {
    var body = $('files').querySelector('tbody');
    body.textContent = '';
    status.assemblies.forEach(function (a) {
      var tr = document.createElement('tr');
      var name = document.createElement('td'); name.textContent = a.fileName;
      var state = document.createElement('td'); state.textContent = a.fileProcessingState; state.className = a.fileProcessingState;
      var why = document.createElement('td');
      why.textContent = a.messages.map(function (m) { return m.messageType + ': ' + m.message; }).join(' ');
      tr.append(name, state, why);
      body.append(tr);
    });
    $('files').hidden = status.assemblies.length === 0;
  }
  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }
  $('send').addEventListener('submit', function (event) {
    event.preventDefault();
    fail('');
    if (!chosen) { fail('Choose or drop a ZIP archive first.'); return; }
    var form = new FormData();
    form.append('archive', chosen, chosen.name);
    if ($('comment').value) form.append('comment', $('comment').value);
    var xhr = new XMLHttpRequest();
    xhr.open('POST', api + '/archives');
    xhr.setRequestHeader('authorization', 'Bearer ' + token);
    xhr.responseType = 'json';
    $('upload').disabled = true;
    $('result').textContent = '';
    $('progress').hidden = false;
    xhr.upload.addEventListener('progress', function (e) {
      if (!e.lengthComputable) return;
      $('progress').value = e.loaded / e.total;
      $('phase').textContent = 'Uploading: ' + Math.round(100 * e.loaded / e.total) + ' %';
    });
    xhr.addEventListener('error', function () { $('upload').disabled = false; fail('The upload failed: the service could not be reached.'); });
    xhr.addEventListener('load', async function () {
      try {
        if (xhr.status !== 201) throw new Error(problemText(xhr.status, xhr.response));
        var job = xhr.response;
        $('phase').textContent = 'Uploaded. Signing job ' + job.id + '…';
        var status;
        for (;;) {
          status = await call('/assemblies/' + encodeURIComponent(job.id) + '/status');
          render(status);
          if (status.processingFinished) break;
          await sleep(400);
        }
        var signed = status.assemblies.filter(function (a) { return a.fileProcessingState === 'Signed'; }).length;
        $('phase').textContent = 'Finished: ' + signed + ' of ' + status.assemblies.length + ' assemblies signed.';
        var blob = await call('/archives/' + encodeURIComponent(job.id));
        var link = document.createElement('a');
        link.className = 'download';
        link.href = URL.createObjectURL(blob);
        link.download = chosen.name.replace(/\\.zip$/i, '') + '-signed.zip';
        link.textContent = 'Download ' + link.download;
        $('result').append(link);
        link.focus();
      } catch (e) {
        $('phase').textContent = 'Refused.';
        fail(e.message);
      } finally {
        $('upload').disabled = false;
      }
    });
    xhr.send(form);
  });
})();
`;

const attribute = (text: string) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function html(apiPrefix: string, signIn?: InteractiveSignIn): string {
  const api = apiPrefix.replace(/[^A-Za-z0-9/._-]/g, '');
  const oidc = signIn ? ` data-oidc="${attribute(JSON.stringify(signIn))}"` : '';
  return `<!DOCTYPE html>
<html lang="en" data-api="${api}"${oidc}>
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Archive exchange: sign a project archive</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/exchange/exchange.css">
<script src="/exchange/exchange.js" defer></script>
</head>
<body>
<main>
<h1>Archive exchange</h1>
<p class="muted">Upload a ZIP archive of your project. The service signs the assemblies inside that carry the vendor attribute and returns an archive with every file at its path, signed where signing succeeded, plus <code>signing-log.txt</code> and a log per file under <code>signing-logs/</code>. Password-protected archives cannot be read.</p>
<h2>1. Sign in</h2>
<form id="signin">
<label for="token">Access token</label>
<input id="token" name="token" type="password" autocomplete="off" required aria-describedby="who">
<button type="submit">Sign in</button>
<p id="who" class="muted" aria-live="polite">Not signed in.</p>
</form>
<p id="oidc" hidden><button id="oidc-button" type="button">Sign in at ${signIn ? attribute(new URL(signIn.issuer).host) : 'the identity provider'}</button></p>
<h2>2. Archive</h2>
<form id="send">
<div id="drop">
<label for="archive">Archive (.zip)</label>
<input id="archive" name="archive" type="file" accept=".zip,application/zip" aria-describedby="chosen">
<p class="muted">Or drop a ZIP file on this box.</p>
<p id="chosen" aria-live="polite">No archive chosen.</p>
</div>
<label for="comment">Comment (optional)</label>
<input id="comment" name="comment" type="text" maxlength="1000">
<button id="upload" type="submit" disabled>Upload and sign</button>
</form>
<h2>3. Progress and result</h2>
<progress id="progress" max="1" value="0" hidden aria-labelledby="phase"></progress>
<p id="phase" aria-live="polite"></p>
<div id="error" role="alert"></div>
<table id="files" hidden><caption class="muted">Each assembly's state</caption><thead><tr><th scope="col">File</th><th scope="col">State</th><th scope="col">Messages</th></tr></thead><tbody></tbody></table>
<div id="result"></div>
</main>
</body>
</html>
`;
}

/**
 * Registers GET /exchange and its script and style; the page calls the API under `apiPrefix`. With `signIn`, it
 * also offers the interactive sign-in at the issuer (its redirect URI is `<service>/exchange`).
 */
export function registerExchangePage(app: FastifyInstance, apiPrefix: string, signIn?: InteractiveSignIn): void {
  const policy = csp(signIn?.tokenEndpoint);
  const send = (reply: FastifyReply, type: string, body: string) =>
    reply
      .type(type)
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .send(body);
  const page = html(apiPrefix, signIn);
  app.get('/exchange', { schema: { hide: true } }, (_request, reply) => send(reply, 'text/html; charset=utf-8', page));
  app.get('/exchange/exchange.js', { schema: { hide: true } }, (_request, reply) => send(reply, 'text/javascript; charset=utf-8', SCRIPT));
  app.get('/exchange/exchange.css', { schema: { hide: true } }, (_request, reply) => send(reply, 'text/css; charset=utf-8', CSS));
}
