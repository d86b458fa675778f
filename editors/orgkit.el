;;; orgkit.el --- Deep, fast memory over org notes, through orgkit  -*- lexical-binding: t; -*-

;; Copyright (C) 2026 The orgkit authors

;; Author: The orgkit authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "27.1"))
;; Keywords: outlines, hypermedia, matching
;; SPDX-License-Identifier: MIT

;; This file is not part of GNU Emacs.  It is part of orgkit and, like it,
;; released under the MIT license.

;;; Commentary:

;; orgkit.el brings orgkit's search, headline scan, deep read, backlinks,
;; note creation and tangling into Emacs.  Emacs parses nothing itself: every
;; question goes to the `orgkit' program, over one warm `orgkit serve'
;; process that speaks JSON lines on its standard input and output.  When the
;; server cannot run (an older orgkit, a broken environment, or
;; `orgkit-use-server' set to nil), each question becomes a one-shot
;; `orgkit COMMAND ... --json' call instead, with the same results.
;;
;; Set-up:
;;
;;   (require 'orgkit)                    ; or let the autoloads do it
;;   (setq orgkit-notes-directory "~/notes")
;;   (global-set-key (kbd "C-c o") orgkit-command-map)
;;
;; Commands (and their keys in `orgkit-command-map'):
;;
;;   s  `orgkit-search'       search, pick a result, jump to it
;;   c  `orgkit-scan'         a sparse tree of the headlines matching a query
;;   l  `orgkit-recent'       the notes changed lately, newest first
;;   f  `orgkit-find-node'    visit a node by title or alias
;;   i  `orgkit-insert-link'  insert an id link to a node at point
;;   b  `orgkit-backlinks'    the notes linking to the node at point
;;   r  `orgkit-read'         the node at point and the notes it links to
;;   o  `orgkit-open'         visit a note by ID, or a file or heading by locator
;;   n  `orgkit-new-note'     create a note with a fresh ID and visit it
;;   t  `orgkit-tangle'       tangle the current file
;;   g  `orgkit-guidance'     the guidance file distilled from corrections
;;
;; Errors reported by orgkit (an unknown ID, a missing notes directory) reach
;; you as one line in the echo area.

;;; Code:

(require 'button)
(require 'cl-lib)
(require 'json)
(require 'org)
(require 'org-element)
(require 'subr-x)
(require 'xref)

;;;; Customisation

(defgroup orgkit nil
  "Deep, fast memory over org notes, through the orgkit program."
  :group 'org
  :prefix "orgkit-")

(defcustom orgkit-program "orgkit"
  "The orgkit program: a name looked up in `exec-path', or a file name."
  :type 'string)

(defcustom orgkit-notes-directory nil
  "The notes directory orgkit works on.
When nil, use the environment variable ORGKIT_NOTES, else
`org-roam-directory' when org-roam is loaded."
  :type '(choice (const :tag "From ORGKIT_NOTES or org-roam" nil)
                 (directory :tag "Directory")))

(defcustom orgkit-use-server t
  "Non-nil means keep one `orgkit serve' process and ask it.
When nil, or when the server cannot run, every request is a
one-shot command-line call with --json (slower: each call starts
orgkit anew)."
  :type 'boolean)

(defcustom orgkit-serve-extra-args nil
  "Extra command-line arguments for `orgkit serve', after its own."
  :type '(repeat string))

(defcustom orgkit-environment nil
  "Extra environment variables for orgkit, as \"NAME=VALUE\" strings.
For example \"ORGKIT_MODEL_PATH=/models/minilm\" or
\"ORGKIT_STATE_DIR=/tmp/orgkit-state\".  They apply to the server
and to one-shot calls alike."
  :type '(repeat string))

(defcustom orgkit-timeout 30
  "Seconds to wait for an answer from orgkit before giving up."
  :type 'number)

(defcustom orgkit-server-retry-delay 60
  "Seconds to use the command line after the server failed to start.
When `orgkit serve' exits before answering anything, orgkit.el
answers from one-shot calls for this long before trying to start
the server again."
  :type 'number)

(defcustom orgkit-search-limit 20
  "How many results `orgkit-search' asks for."
  :type 'integer)

(defcustom orgkit-search-mode nil
  "The search mode for `orgkit-search', or nil for orgkit's default."
  :type '(choice (const :tag "orgkit's default" nil)
                 (const "hybrid") (const "dense") (const "lexical")))

(defcustom orgkit-search-scope nil
  "What `orgkit-search' answers from, or nil for orgkit's default.
\"notes\": your notes and admitted memory; \"extractions\": also the
claim, quote, hub and source notes extraction writes; \"pending\":
also deposits waiting for review; \"all\": everything."
  :type '(choice (const :tag "orgkit's default (search.scope)" nil)
                 (const "notes") (const "extractions") (const "pending") (const "all")))

(defcustom orgkit-search-exact nil
  "Non-nil: `orgkit-search' looks for the words as typed, correcting none."
  :type 'boolean)

(defcustom orgkit-scan-limit nil
  "At most this many headlines in `orgkit-scan', or nil for all."
  :type '(choice (const :tag "No limit" nil) integer))

(defcustom orgkit-recent-limit 20
  "At most this many notes in `orgkit-recent'."
  :type 'integer)

(defcustom orgkit-read-depth 1
  "How many link hops `orgkit-read' follows from the node it reads."
  :type 'integer)

(defcustom orgkit-read-budget 4000
  "The token budget of `orgkit-read' (about four characters a token)."
  :type 'integer)

(defface orgkit-detail '((t :inherit shadow))
  "Face for outline paths, files and scores next to titles.")

(defface orgkit-file '((t :inherit font-lock-function-name-face))
  "Face for file names heading groups of results.")

;;;; Errors and small helpers

(define-error 'orgkit-server-unavailable "orgkit serve is not available")

(defvar orgkit-search-history nil "Minibuffer history of `orgkit-search'.")
(defvar orgkit-scan-history nil "Minibuffer history of `orgkit-scan'.")
(defvar orgkit-node-history nil "Minibuffer history of node names.")

(defvar orgkit--last-transport nil
  "How the last request was answered: `server' or `cli'.")

(defun orgkit--fail (message)
  "Signal a `user-error' showing MESSAGE from orgkit as one line."
  (let* ((text (string-trim (or message "")))
         (text (replace-regexp-in-string "\\`orgkit: \\(?:error: \\)?" "" text))
         (text (car (split-string text "\n" t))))
    (user-error "orgkit: %s" (or text "failed"))))

(defun orgkit--notes-directory ()
  "The notes directory as an absolute name without a trailing slash."
  (let ((dir (or orgkit-notes-directory
                 (let ((env (getenv "ORGKIT_NOTES")))
                   (and env (not (string-empty-p env)) env))
                 (and (boundp 'org-roam-directory)
                      (symbol-value 'org-roam-directory)))))
    (unless dir
      (user-error "orgkit: set `orgkit-notes-directory' (or ORGKIT_NOTES) to your notes"))
    (setq dir (directory-file-name (expand-file-name dir)))
    (unless (file-directory-p dir)
      (user-error "orgkit: notes directory not found: %s" dir))
    dir))

(defmacro orgkit--with-environment (dir &rest body)
  "Run BODY with `orgkit-environment' in effect and DIR as current directory."
  (declare (indent 1) (debug t))
  `(let ((process-environment (append orgkit-environment process-environment))
         (default-directory (file-name-as-directory ,dir)))
     ,@body))

(defun orgkit--program ()
  "`orgkit-program', with a file name made absolute (\"~\" expanded)."
  (if (file-name-directory orgkit-program)
      (expand-file-name orgkit-program)
    orgkit-program))

(defun orgkit--json-parse (string)
  "Parse the JSON document STRING: objects as alists, arrays as lists."
  (if (fboundp 'json-parse-string)
      (json-parse-string string :object-type 'alist :array-type 'list
                         :null-object nil :false-object nil)
    (let ((json-object-type 'alist) (json-array-type 'list)
          (json-key-type 'symbol) (json-null nil) (json-false nil))
      (json-read-from-string string))))

(defun orgkit--json-encode (object)
  "Encode the alist OBJECT as one line of JSON."
  (if (fboundp 'json-serialize)
      (json-serialize object)
    (let ((json-encoding-pretty-print nil))
      (json-encode object))))

(defun orgkit--compact (args)
  "ARGS without the entries whose value is nil."
  (cl-remove-if-not #'cdr args))

;;;; Requests: the server, the command line, and the choice between them

;;;;; The operation registry

(defvar orgkit--process nil
  "The `orgkit serve' process, or nil.")

(defvar orgkit--registry nil
  "The operations orgkit offers, as `orgkit ops --json' lists them.
A cons (KEY . OPS): KEY names the program and environment they were
read from, OPS is an alist of operation names to their descriptions
(command words, positional parameters, options, JSON Schema).")

(defun orgkit--registry-key ()
  "What the registry depends on: the program and its environment."
  (list (orgkit--program) orgkit-environment))

(defun orgkit--ops (dir)
  "The operation registry of the orgkit program, read once (DIR: the notes).
It comes from the running server (`{\"op\": \"ops\"}') when there
is one, else from `orgkit ops --json'."
  (let ((key (orgkit--registry-key)))
    (unless (equal (car orgkit--registry) key)
      (let ((ops (or (and (process-live-p orgkit--process)
                          (condition-case nil
                              (orgkit--server-wait orgkit--process
                                                   (orgkit--server-send orgkit--process "ops" nil))
                            (orgkit-server-unavailable nil)))
                     (orgkit--cli-call dir "ops" nil nil))))
        (setq orgkit--registry
              (cons key (mapcar (lambda (op) (cons (alist-get 'name op) op)) ops)))))
    (cdr orgkit--registry)))

(defun orgkit--op (dir name)
  "The registry's description of the operation NAME (DIR: the notes)."
  (or (cdr (assoc name (orgkit--ops dir)))
      (orgkit--fail (format "this orgkit has no operation %s" name))))

(defun orgkit--op-parameters (op)
  "The parameter names of OP, a registry entry, as symbols."
  (mapcar #'car (alist-get 'properties (alist-get 'parameters op))))

(defun orgkit--check-args (op args)
  "Signal a `user-error' when ARGS holds a field that OP does not take."
  (let ((known (orgkit--op-parameters op)))
    (pcase-dolist (`(,key . ,_) args)
      (unless (memq key known)
        (orgkit--fail (format "%s has no parameter %s (parameters: %s)"
                              (alist-get 'name op) key
                              (mapconcat #'symbol-name known ", ")))))))

(defvar orgkit-last-warnings nil
  "The warnings and corrections orgkit gave with its last answer.
A list of one-line strings: a query read as corrected (\"showing
results for ...\"), the model still loading, a budget note, \"no
blocks to tangle\".  `orgkit--call' says them in the echo area, and
the buffers orgkit fills show them in their header line.")

(defun orgkit--warnings-text ()
  "`orgkit-last-warnings' joined on one line, or nil when there are none."
  (and orgkit-last-warnings (string-join orgkit-last-warnings "; ")))

(defun orgkit--warnings-header ()
  "Show `orgkit-last-warnings' in the current buffer's header line.
Without warnings the buffer has no header line."
  (let ((text (orgkit--warnings-text)))
    (setq-local header-line-format
                (and text (propertize (concat "orgkit: " (replace-regexp-in-string "%" "%%" text t t))
                                      'face 'warning)))))

(defun orgkit--call (op args)
  "Ask orgkit for OP with the request fields ARGS and return the answer.
ARGS is an alist of field names (symbols, as the registry names the
operation's parameters) to values: strings, numbers, t for a flag,
vectors for lists; entries whose value is nil are left out.  The
field names are checked against the registry.  Operations on the
notes go to the server, the others (such as tangling a file) to
the command line.  The answer is parsed JSON (objects as alists,
arrays as lists).  Errors reported by orgkit become a `user-error'."
  (let* ((args (orgkit--compact args))
         (dir (orgkit--notes-directory))
         (spec (orgkit--op dir op))
         answer)
    (orgkit--check-args spec args)
    (setq orgkit-last-warnings nil)
    (setq answer
          (if (and orgkit-use-server (alist-get 'notes spec)
                   (not (orgkit--server-resting-p)))
              (condition-case err
                  (orgkit--server-call dir op args)
                (orgkit-server-unavailable
                 (message "orgkit: %s; using the command line" (cadr err))
                 (orgkit--cli-call dir op args spec)))
            (orgkit--cli-call dir op args spec)))
    (when orgkit-last-warnings
      (message "orgkit: %s" (orgkit--warnings-text)))
    answer))

;;;;; The command line

(defun orgkit--cli-args (op args dir spec)
  "The command-line arguments for OP with request fields ARGS on notes DIR.
SPEC is OP's registry entry: its command words, which fields are
positional and each option's name.  Without SPEC, OP is `ops'."
  (let ((positional (mapcar #'intern (alist-get 'positional spec)))
        (flags (alist-get 'options spec))
        options values)
    (pcase-dolist (`(,key . ,value) args)
      (cond
       ((memq key positional)
        (push (cons key (if (vectorp value)
                            (mapcar #'orgkit--arg-string value)
                          (list (orgkit--arg-string value))))
              values))
       ((eq value t)
        (push (orgkit--option-name key flags) options))
       (t
        (push (orgkit--option-name key flags) options)
        (push (orgkit--option-value value) options))))
    (append (if spec (alist-get 'command spec) (list op))
            (nreverse options)
            (when (alist-get 'notes spec) (list "--notes" dir))
            (list "--json" "--")
            (mapcan (lambda (key) (copy-sequence (alist-get key values))) positional))))

(defun orgkit--option-name (key flags)
  "The command-line option for the request field KEY, from the registry's FLAGS."
  (or (alist-get key flags)
      (orgkit--fail (format "no command-line option for %s" key))))

(defun orgkit--option-value (value)
  "VALUE as an option's argument: lists comma-separated, objects as JSON."
  (cond ((vectorp value) (mapconcat #'orgkit--arg-string value ","))
        ((consp value) (orgkit--json-encode value))
        (t (orgkit--arg-string value))))

(defun orgkit--arg-string (value)
  "VALUE as one command-line argument."
  (if (stringp value) value (format "%s" value)))

(defun orgkit--cli-call (dir op args spec)
  "Run `orgkit OP' once with the request fields ARGS on notes DIR.
SPEC is OP's registry entry (nil for `ops' itself).  Return the
parsed JSON output; a failure becomes a `user-error' carrying
orgkit's one-line message."
  (setq orgkit--last-transport 'cli)
  (let ((argv (orgkit--cli-args op args dir spec))
        (stderr-file (make-temp-file "orgkit-stderr")))
    (unwind-protect
        (with-temp-buffer
          (let* ((coding-system-for-read 'utf-8)
                 (coding-system-for-write 'utf-8)
                 (status (condition-case err
                             (orgkit--with-environment dir
                               (apply #'call-process (orgkit--program) nil
                                      (list (current-buffer) stderr-file) nil argv))
                           (file-error
                            (orgkit--fail (format "cannot run %s: %s" orgkit-program
                                                  (error-message-string err)))))))
            (unless (eql status 0)
              (orgkit--fail (orgkit--error-line
                             (with-temp-buffer
                               (insert-file-contents stderr-file)
                               (buffer-string))
                             status)))
            (setq orgkit-last-warnings (orgkit--warning-lines stderr-file))
            (condition-case nil
                (orgkit--json-parse (buffer-string))
              (error (orgkit--fail (format "unreadable output from `%s %s'"
                                           orgkit-program op))))))
      (delete-file stderr-file))))

(defun orgkit--warning-lines (stderr-file)
  "The warnings orgkit wrote to STDERR-FILE, in order.
They are its lines starting `orgkit: warning: '."
  (with-temp-buffer
    (insert-file-contents stderr-file)
    (cl-loop for line in (split-string (buffer-string) "\n" t)
             when (string-match "\\`orgkit: warning: \\(.*\\)" line)
             collect (match-string 1 line))))

(defun orgkit--error-line (stderr &optional status)
  "Return the line of STDERR telling what went wrong (exit STATUS)."
  (let ((lines (split-string (or stderr "") "\n" t "[ \t\r]+")))
    (or (cl-loop for line in lines
                 when (string-match "\\`orgkit: error: \\(.*\\)" line)
                 return (match-string 1 line))
        (cl-loop for line in lines
                 when (string-match "\\`Error: \\(.*\\)" line)
                 return (match-string 1 line))
        (car (last lines))
        (format "%s exited with status %s" orgkit-program status))))

;;;;; The server

(defvar orgkit--server-rest-until nil
  "While `float-time' is below this, requests skip the server.")

(defconst orgkit--stderr-buffer " *orgkit-serve stderr*"
  "The buffer collecting the server's standard error.")

(defun orgkit--server-resting-p ()
  "Non-nil while the server is not to be tried after a failed start."
  (and orgkit--server-rest-until (< (float-time) orgkit--server-rest-until)))

(defun orgkit--server-command (dir)
  "The command line starting the server on notes DIR."
  (append (list (orgkit--program) "serve" "--notes" dir) orgkit-serve-extra-args))

(defun orgkit--server (dir)
  "The live server for notes DIR, started if needed."
  (let ((command (orgkit--server-command dir)))
    (unless (and (process-live-p orgkit--process)
                 (equal (process-get orgkit--process 'orgkit-command) command))
      (orgkit-stop-server)
      (setq orgkit--process (orgkit--start-server dir command)))
    orgkit--process))

(defun orgkit--start-server (dir command)
  "Start COMMAND as the server for notes DIR and return its process."
  (let ((stderr (get-buffer-create orgkit--stderr-buffer))
        proc)
    ;; A missing program is found out here rather than by a spawn that
    ;; fails later: with :stderr, `make-process' reports it only as an exit.
    (unless (orgkit--executable (car command))
      (orgkit--rest-server)
      (signal 'orgkit-server-unavailable
              (list (format "cannot find %s" (car command)))))
    (with-current-buffer stderr
      (let ((inhibit-read-only t))
        (erase-buffer)))
    (condition-case err
        (orgkit--with-environment dir
          (setq proc (make-process
                      :name "orgkit-serve"
                      :command command
                      :connection-type 'pipe
                      :coding 'utf-8-unix
                      :noquery t
                      :stderr stderr
                      :filter #'orgkit--filter
                      :sentinel #'orgkit--sentinel)))
      (error
       (orgkit--rest-server)
       (signal 'orgkit-server-unavailable
               (list (format "cannot start %s serve: %s" orgkit-program
                             (error-message-string err))))))
    (let ((stderr-proc (get-buffer-process stderr)))
      (when stderr-proc
        (set-process-query-on-exit-flag stderr-proc nil)))
    (process-put proc 'orgkit-command command)
    (process-put proc 'orgkit-queue nil)
    (process-put proc 'orgkit-chunks nil)
    (process-put proc 'orgkit-answered nil)
    proc))

(defun orgkit--executable (program)
  "PROGRAM's absolute name when it can be run, else nil."
  (if (file-name-directory program)
      (let ((file (expand-file-name program)))
        (and (file-executable-p file) (not (file-directory-p file)) file))
    (executable-find program)))

(defun orgkit--rest-server ()
  "Use the command line for `orgkit-server-retry-delay' seconds."
  (setq orgkit--server-rest-until (+ (float-time) orgkit-server-retry-delay)))

;;;###autoload
(defun orgkit-start-server ()
  "Start the `orgkit serve' process now, so that the first request is fast."
  (interactive)
  (setq orgkit--server-rest-until nil)
  (condition-case err
      (let ((proc (orgkit--server (orgkit--notes-directory))))
        (when (called-interactively-p 'interactive)
          (message "orgkit: server running (pid %s)" (process-id proc)))
        proc)
    (orgkit-server-unavailable (orgkit--fail (cadr err)))))

(defun orgkit-stop-server ()
  "Stop the `orgkit serve' process, if one is running.
The operation registry is read again with the next request."
  (interactive)
  (setq orgkit--registry nil)
  (when (processp orgkit--process)
    (let ((proc orgkit--process))
      (setq orgkit--process nil)
      (when (process-live-p proc)
        (set-process-sentinel proc #'ignore)
        (delete-process proc))
      (orgkit--fail-pending proc "the server was stopped"))))

(defun orgkit--filter (proc string)
  "Collect the output STRING of server PROC and settle each complete line.
Responses come one per line, in the order of the requests."
  (if (not (string-match-p "\n" string))
      (process-put proc 'orgkit-chunks (cons string (process-get proc 'orgkit-chunks)))
    (let* ((chunks (cons string (process-get proc 'orgkit-chunks)))
           (text (apply #'concat (nreverse chunks)))
           (start 0))
      (process-put proc 'orgkit-chunks nil)
      (while (string-match "\n" text start)
        (let ((line (substring text start (match-beginning 0))))
          (setq start (match-end 0))
          (unless (string-blank-p line)
            (orgkit--answer proc line))))
      (when (< start (length text))
        (process-put proc 'orgkit-chunks (list (substring text start)))))))

(defun orgkit--answer (proc line)
  "Settle the request of server PROC that the response LINE answers.
A response carrying a request tag answers the request so tagged;
one without answers the oldest request still pending."
  (let* ((queue (process-get proc 'orgkit-queue))
         (response (condition-case nil (orgkit--json-parse line)
                     (error 'unreadable)))
         (object (and (consp response) (consp (car response)) response))
         (tag (alist-get 'request object))
         (entry (if tag (assoc tag queue) (car queue))))
    (when entry
      (process-put proc 'orgkit-queue (delq entry queue))
      (process-put proc 'orgkit-answered t)
      (orgkit--log-warnings (alist-get 'warnings object))
      (setq orgkit-last-warnings (alist-get 'warnings object))
      (when (alist-get 'errors object)
        (orgkit--log-warnings (alist-get 'errors object))
        (message "orgkit: %s" (string-join (alist-get 'errors object) "; ")))
      (let ((cell (cdr entry)))
        (cond
         ((eq response 'unreadable)
          (setcar cell 'error)
          (setcdr cell (format "unreadable response from the server: %s"
                               (truncate-string-to-width line 80))))
         ((assq 'error object)
          (setcar cell 'error)
          (setcdr cell (format "%s" (alist-get 'error object))))
         (t
          (setcar cell 'ok)
          (setcdr cell (if (assq 'result object)
                           (alist-get 'result object)
                         response))))))))

(defun orgkit--log-warnings (warnings)
  "Keep the server's WARNINGS with its standard error, for the curious."
  (when (and warnings (get-buffer orgkit--stderr-buffer))
    (with-current-buffer orgkit--stderr-buffer
      (save-excursion
        (goto-char (point-max))
        (dolist (warning warnings)
          (insert (format "orgkit: warning: %s\n" warning)))))))

(defun orgkit--sentinel (proc _event)
  "When server PROC ends, fail the requests still waiting on it."
  (unless (process-live-p proc)
    (orgkit--fail-pending proc (orgkit--server-exit-message proc))))

(defun orgkit--fail-pending (proc message)
  "Mark every request pending on PROC as failed with MESSAGE."
  (pcase-dolist (`(,_tag . ,cell) (process-get proc 'orgkit-queue))
    (setcar cell 'died)
    (setcdr cell message))
  (process-put proc 'orgkit-queue nil))

(defun orgkit--server-exit-message (proc)
  "Why server PROC ended, from its exit status and last error line."
  (let ((stderr (and (get-buffer orgkit--stderr-buffer)
                     (with-current-buffer orgkit--stderr-buffer
                       (buffer-substring-no-properties (point-min) (point-max))))))
    (format "%s serve exited (%s): %s" orgkit-program (process-exit-status proc)
            (orgkit--error-line
             (replace-regexp-in-string "^Process .*\n?" "" (or stderr ""))
             (process-exit-status proc)))))

(defvar orgkit--request-counter 0
  "The tag of the last request sent to the server.")

(defun orgkit--server-send (proc op args)
  "Send request OP with fields ARGS to server PROC; return its pending cell.
The cell's car becomes `ok', `error' or `died' once answered, and
its cdr the result or the message."
  (let* ((tag (setq orgkit--request-counter (1+ orgkit--request-counter)))
         (cell (cons nil nil))
         (line (orgkit--json-encode `((op . ,op) (request . ,tag) ,@args))))
    (process-put proc 'orgkit-queue
                 (append (process-get proc 'orgkit-queue) (list (cons tag cell))))
    ;; Interactive Emacs turns a write to a server that just died into an
    ;; error; batch Emacs does not ignore SIGPIPE, hence the liveness test.
    (condition-case err
        (if (process-live-p proc)
            (process-send-string proc (concat line "\n"))
          (error "%s serve is not running" orgkit-program))
      (error
       (setcar cell 'died)
       (setcdr cell (error-message-string err))))
    cell))

(defun orgkit--server-wait (proc cell)
  "Wait for server PROC to answer CELL; return the response.
Signal a `user-error' for an error response or a timeout, and
`orgkit-server-unavailable' when the server ended first."
  (let ((deadline (+ (float-time) orgkit-timeout))
        (read-process-output-max (max read-process-output-max (* 1024 1024))))
    (while (and (null (car cell)) (process-live-p proc)
                (< (float-time) deadline))
      (accept-process-output proc 0.05))
    (when (and (null (car cell)) (not (process-live-p proc)))
      ;; The last output and the sentinel may still be on their way.
      (accept-process-output proc 0.05)
      (unless (car cell)
        (orgkit--sentinel proc nil)))
    (pcase (car cell)
      ('ok (cdr cell))
      ('error (orgkit--fail (cdr cell)))
      ('died
       (unless (process-get proc 'orgkit-answered)
         (orgkit--rest-server))
       (signal 'orgkit-server-unavailable (list (cdr cell))))
      (_ (orgkit--fail
          (format "no answer from %s serve within %s s %s" orgkit-program orgkit-timeout
                  "(it may be indexing; see `orgkit-timeout')"))))))

(defun orgkit--server-call (dir op args)
  "Ask the server on notes DIR for OP with fields ARGS; return the answer."
  (let ((proc (orgkit--server dir)))
    (setq orgkit--last-transport 'server)
    (orgkit--server-wait proc (orgkit--server-send proc op args))))

;;;; Visiting results

(defun orgkit--visit (root file line)
  "Visit FILE (relative to ROOT) at LINE, showing the entry there."
  (let ((path (expand-file-name file root)))
    (unless (file-exists-p path)
      (user-error "orgkit: %s no longer exists" path))
    (xref-push-marker-stack)
    (find-file path)
    (widen)
    (goto-char (point-min))
    (forward-line (1- (or line 1)))
    (when (derived-mode-p 'org-mode)
      (if (fboundp 'org-fold-show-context)
          (org-fold-show-context 'link-search)
        (with-no-warnings (org-show-context 'link-search))))
    (current-buffer)))

(defun orgkit--olp-string (olp)
  "The outline path OLP as one string, or nil when empty."
  (and olp (string-join olp " > ")))

(defun orgkit--completion-table (candidates &optional keep-order annotate)
  "A completion table over the alist CANDIDATES of display strings.
With KEEP-ORDER, completion UIs keep the candidates in orgkit's order.
ANNOTATE, when non-nil, is a function of a candidate's value that
returns the text shown after it."
  (lambda (string pred action)
    (if (eq action 'metadata)
        `(metadata (category . orgkit-node)
                   ,@(when keep-order
                       '((display-sort-function . identity)
                         (cycle-sort-function . identity)))
                   ,@(when annotate
                       `((annotation-function
                          . ,(lambda (candidate)
                               (let ((value (cdr (assoc candidate candidates))))
                                 (and value (funcall annotate value))))))))
      (complete-with-action action candidates string pred))))

(defun orgkit--unique (label seen)
  "LABEL made unique against the hash table SEEN, which records it."
  (let ((n (gethash label seen 0)))
    (puthash label (1+ n) seen)
    (if (zerop n) label (format "%s <%d>" label (1+ n)))))

;;;; Search

;;;###autoload
(defun orgkit-search (query &optional filters)
  "Search the notes for QUERY; pick a result and visit it.
Results come in orgkit's order, each with its title, outline path
and score.  With a prefix argument, also ask for FILTERS (tags, a
folder, a TODO state, dates; see `orgkit--read-filters').  Return
the chosen result."
  (interactive (list (read-string "orgkit search: " nil 'orgkit-search-history)
                     (and current-prefix-arg (orgkit--read-filters))))
  (when (string-blank-p query)
    (user-error "orgkit: nothing to search for"))
  (let* ((root (orgkit--notes-directory))
         (results (orgkit--call "search" `((query . ,query)
                                           (limit . ,orgkit-search-limit)
                                           (mode . ,orgkit-search-mode)
                                           (scope . ,orgkit-search-scope)
                                           (exact . ,(and orgkit-search-exact t))
                                           ,@filters)))
         (seen (make-hash-table :test #'equal))
         (candidates
          (mapcar (lambda (r) (cons (orgkit--unique (orgkit--search-label r) seen) r))
                  results)))
    (unless candidates
      (user-error "orgkit: nothing found for %S" query))
    (unless (cl-some #'orgkit--relevant-p results)
      (message "orgkit: nothing relevant to %S; the closest matches follow" query))
    (let* ((choice (completing-read (format "orgkit search %s%s: " query
                                            (if orgkit-last-warnings
                                                (format " (%s)" (orgkit--warnings-text))
                                              ""))
                                    (orgkit--completion-table
                                     candidates t #'orgkit--search-annotation)
                                    nil t nil 'orgkit-node-history))
           (result (cdr (assoc choice candidates))))
      (unless result
        (user-error "orgkit: no such result: %s" choice))
      (orgkit--visit root (alist-get 'file result) (alist-get 'line result))
      result)))

(defun orgkit--read-filters (&optional only)
  "Ask for the filters of a search or scan; an empty answer leaves one out.
Return them as request fields: tags (comma-separated), a folder or
glob relative to the notes, a TODO state, and the dates the files
changed since and before (2026-12-01, or a span back such as 7d).
ONLY, a list of field names, asks for those alone."
  (let (filters)
    (dolist (field (cl-remove-if-not
                    (lambda (field) (or (null only) (memq (car field) only)))
                    '((tag . "Tags (a,b): ") (folder . "Folder or glob: ") (todo . "TODO state: ")
                      (since . "Changed since (2026-12-01, 7d): ") (until . "Changed before: "))))
      (let ((value (string-trim (read-string (cdr field)))))
        (unless (string-empty-p value)
          (push (cons (car field) (if (eq (car field) 'tag)
                                      (vconcat (split-string value "[ ,]+" t))
                                    value))
                filters))))
    (nreverse filters)))

(defun orgkit--search-annotation (result)
  "The snippet of search RESULT on one short line, for completion UIs."
  (let ((snippet (alist-get 'snippet result)))
    (when (and (stringp snippet) (not (string-blank-p snippet)))
      (propertize (concat "  " (truncate-string-to-width
                                (string-trim
                                 (replace-regexp-in-string "[ \t\n]+" " " snippet))
                                70 nil nil "…"))
                  'face 'completions-annotations))))

(defun orgkit--relevant-p (result)
  "Whether RESULT passed orgkit's relevance floor.
A result without a verdict (an older orgkit) counts as relevant."
  (let ((verdict (assq 'relevant result)))
    (or (null verdict) (and (cdr verdict) t))))

(defun orgkit--search-label (result)
  "The completion label of search RESULT: title, outline path, score.
A result below the relevance floor says so after its score."
  (let ((olp (orgkit--olp-string (alist-get 'olp result)))
        (score (alist-get 'score result)))
    (concat (alist-get 'title result)
            (propertize (concat (if olp (format "  (%s)" olp) "")
                                (format "  %s" (alist-get 'file result))
                                (if (numberp score) (format "  %.3f" score) "")
                                (if (orgkit--relevant-p result) "" "  not relevant"))
                        'face 'orgkit-detail))))

;;;; Results buffers

(defvar orgkit-results-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map (make-composed-keymap button-buffer-map special-mode-map))
    (define-key map (kbd "n") #'forward-button)
    (define-key map (kbd "p") #'backward-button)
    (define-key map (kbd "r") #'orgkit-read)
    (define-key map (kbd "b") #'orgkit-backlinks)
    map)
  "Keymap of `orgkit-results-mode'.")

(define-derived-mode orgkit-results-mode special-mode "orgkit"
  "Major mode for orgkit's lists of headlines and backlinks.
Each entry is a button visiting its file at its line.
\\{orgkit-results-mode-map}"
  (setq truncate-lines t))

(define-button-type 'orgkit-hit
  'action #'orgkit--button-visit
  'follow-link t
  'help-echo "Visit this entry")

(defun orgkit--button-visit (button)
  "Visit the file and line that BUTTON stands for."
  (orgkit--visit (button-get button 'orgkit-root)
                 (button-get button 'orgkit-file)
                 (button-get button 'orgkit-line)))

(defun orgkit--insert-hit (root label file line id)
  "Insert a button LABEL visiting FILE (under ROOT) at LINE, node ID."
  (insert-text-button label :type 'orgkit-hit
                      'orgkit-root root 'orgkit-file file 'orgkit-line line)
  (when id
    (put-text-property (line-beginning-position) (point) 'orgkit-id id)))

(defmacro orgkit--with-results-buffer (name root refresh &rest body)
  "Fill the results buffer NAME for notes ROOT with BODY and show it.
REFRESH is a function of no arguments that fills it anew (\\`g')."
  (declare (indent 3) (debug t))
  `(let ((buffer (get-buffer-create ,name)))
     (with-current-buffer buffer
       (let ((inhibit-read-only t))
         (erase-buffer)
         (orgkit-results-mode)
         (orgkit--warnings-header)
         (setq default-directory (file-name-as-directory ,root))
         (setq-local revert-buffer-function
                     (let ((refresh ,refresh)) (lambda (&rest _) (funcall refresh))))
         ,@body
         (goto-char (point-min))
         (ignore-errors (forward-button 1))))
     (pop-to-buffer buffer)
     buffer))

;;;; Scan

;;;###autoload
(defun orgkit-scan (query &optional filters)
  "Show the headlines matching every word of QUERY as a sparse tree.
Each file appears once, with its matching headlines under it; each
headline is a button visiting it.  With a prefix argument, also ask
for FILTERS, as `orgkit-search' does.  Return the buffer."
  (interactive (list (read-string "orgkit scan: " nil 'orgkit-scan-history)
                     (and current-prefix-arg (orgkit--read-filters))))
  (when (string-blank-p query)
    (user-error "orgkit: nothing to scan for"))
  (let* ((root (orgkit--notes-directory))
         (hits (orgkit--call "scan" `((query . ,query) (limit . ,orgkit-scan-limit) ,@filters)))
         (current nil))
    (orgkit--with-results-buffer "*orgkit-scan*" root (lambda () (orgkit-scan query filters))
      (insert (propertize (format "Headlines matching %S: %d\n" query (length hits))
                          'face 'bold))
      (dolist (hit hits)
        (let-alist hit
          (unless (equal .file current)
            (setq current .file)
            (insert "\n" (propertize .file 'face 'orgkit-file) "\n"))
          (insert "  " (if (eql .level 0) "#+title:" (make-string .level ?*)) " ")
          (let ((olp (orgkit--olp-string .olp)))
            (when olp
              (insert (propertize (concat olp " > ") 'face 'orgkit-detail))))
          (orgkit--insert-hit root .title .file .line .id)
          (insert (propertize (format "  :%d" .line) 'face 'orgkit-detail) "\n")))
      (unless hits
        (insert "\nNothing matches.\n")))))

;;;; Recent

;;;###autoload
(defun orgkit-recent (&optional filters)
  "List the notes changed lately, newest first, each a button visiting it.
With a prefix argument, ask for FILTERS: a folder or glob relative to
the notes, and the dates the files changed since and before.  Return
the buffer."
  (interactive (list (and current-prefix-arg (orgkit--read-filters '(folder since until)))))
  (let* ((root (orgkit--notes-directory))
         (notes (orgkit--call "recent" `((limit . ,orgkit-recent-limit) ,@filters))))
    (orgkit--with-results-buffer "*orgkit-recent*" root (lambda () (orgkit-recent filters))
      (insert (propertize (format "Notes changed lately: %d\n\n" (length notes)) 'face 'bold))
      (dolist (note notes)
        (let-alist note
          (insert (propertize (format "%-20s " (substring .modified 0 (min 19 (length .modified))))
                              'face 'orgkit-detail))
          (orgkit--insert-hit root (or .title .file) .file 1 .id)
          (insert (propertize (concat "  " .file) 'face 'orgkit-file) "\n")))
      (unless notes
        (insert "Nothing changed.\n")))))

;;;; Nodes: find, insert a link

(defun orgkit--node-candidates (nodes)
  "Completion candidates for NODES: one for each title and each alias."
  (let ((seen (make-hash-table :test #'equal)))
    (cl-loop
     for node in nodes
     append
     (let-alist node
       (cl-loop
        for name in (cons .title .aliases)
        for alias-p = nil then t
        collect
        (cons (orgkit--unique
               (concat name
                       (propertize
                        (concat (if alias-p (format "  (alias of %s)" .title) "")
                                (if .olp (format "  (%s)" (orgkit--olp-string .olp)) "")
                                (if .tags (format "  :%s:" (string-join .tags ":")) ""))
                        'face 'orgkit-detail))
               seen)
              (cons name node)))))))

(defun orgkit--read-node (prompt)
  "Read a node by title or alias with PROMPT.
Return (NAME . NODE): the name chosen and the node, or (INPUT)
when the input names no node."
  (let* ((candidates (orgkit--node-candidates (orgkit--call "nodes" nil)))
         (choice (completing-read prompt (orgkit--completion-table candidates)
                                  nil nil nil 'orgkit-node-history)))
    (when (string-blank-p choice)
      (user-error "orgkit: no node chosen"))
    (or (cdr (assoc choice candidates))
        (cdr (cl-find choice candidates :key #'cadr :test #'equal))
        (list choice))))

;;;###autoload
(defun orgkit-find-node ()
  "Visit a node chosen by title or alias.
When the input names no node, offer to create a note with that
title.  Return the node."
  (interactive)
  (let* ((root (orgkit--notes-directory))
         (chosen (orgkit--read-node "orgkit node: "))
         (node (cdr chosen)))
    (if node
        (progn (orgkit--visit root (alist-get 'file node) (alist-get 'line node))
               node)
      (when (y-or-n-p (format "No node is called %S; create it? " (car chosen)))
        (orgkit-new-note (car chosen))))))

;;;###autoload
(defun orgkit-insert-link ()
  "Insert an id link to a node chosen by title or alias at point.
The link's description is the name chosen; with an active region,
the region's text becomes the description and the link replaces
it.  When the input names no node, offer to create a note with
that title and link to it.  Return the node's ID."
  (interactive)
  (let* ((region (and (use-region-p)
                      (cons (region-beginning) (region-end))))
         (chosen (orgkit--read-node "orgkit link to: "))
         (node (cdr chosen))
         (target (current-buffer))
         (point (point-marker))
         id name)
    (if node
        (setq id (alist-get 'id node) name (car chosen))
      (unless (y-or-n-p (format "No node is called %S; create it? " (car chosen)))
        (user-error "orgkit: no link inserted"))
      (let ((new (save-window-excursion
                   (save-current-buffer (orgkit-new-note (car chosen))))))
        (setq id (alist-get 'id new) name (alist-get 'title new))))
    (with-current-buffer target
      (goto-char point)
      (when region
        (setq name (buffer-substring-no-properties (car region) (cdr region)))
        (delete-region (car region) (cdr region))
        (goto-char (car region)))
      (insert (org-link-make-string (concat "id:" id) name)))
    id))

;;;; The node at point: backlinks, deep read

(defun orgkit--id-at-point ()
  "The ID of the node at point, or nil.
In an orgkit results buffer, the entry's node; in Org, the ID of
the entry at point or of the nearest ancestor that has one, up to
the file's own property drawer."
  (or (get-text-property (point) 'orgkit-id)
      (and (derived-mode-p 'org-mode)
           (org-with-wide-buffer (org-entry-get nil "ID" t)))))

(defun orgkit--read-node-id (prompt)
  "Read a node with PROMPT and return its ID."
  (let ((node (cdr (orgkit--read-node prompt))))
    (unless node (user-error "orgkit: no such node"))
    (alist-get 'id node)))

(defun orgkit--read-id (prompt)
  "The ID of the node at point; without one, read a node with PROMPT."
  (or (orgkit--id-at-point) (orgkit--read-node-id prompt)))

;;;###autoload
(defun orgkit-backlinks (id)
  "List the notes linking to the node ID: by default, the node at point.
With a prefix argument, or when point is in no node, read the node.
Each backlink is a button visiting the link.  Return the buffer."
  (interactive (list (if current-prefix-arg
                         (orgkit--read-node-id "orgkit backlinks of: ")
                       (orgkit--read-id "orgkit backlinks of: "))))
  (let* ((root (orgkit--notes-directory))
         (node (car (orgkit--call "read" `((ids . ,(vector id))))))
         (links (orgkit--call "backlinks" `((id . ,id)))))
    (orgkit--with-results-buffer "*orgkit-backlinks*" root
        (lambda () (orgkit-backlinks id))
      (insert (propertize (format "Backlinks to %s: %d\n\n"
                                  (or (alist-get 'title node) id) (length links))
                          'face 'bold))
      (dolist (link links)
        (let-alist link
          (insert "  ")
          (orgkit--insert-hit root (or .title .source) .file .line .source)
          (insert (propertize (format "  %s:%d" .file .line) 'face 'orgkit-detail) "\n")))
      (unless links
        (insert "  Nothing links here.\n")))))

(defvar orgkit-read-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "q") #'quit-window)
    (define-key map (kbd "g") #'revert-buffer)
    map)
  "Keymap of `orgkit-read-mode'.")

(define-minor-mode orgkit-read-mode
  "Minor mode of the read-only Org buffers that `orgkit-read' fills.
\\{orgkit-read-mode-map}"
  :lighter " orgkit-read")

(defvar-local orgkit--read-docs nil
  "In an `orgkit-read' buffer: the notes read, as orgkit described them.")

;;;###autoload
(defun orgkit-read (id)
  "Read the node ID deeply: its text and the notes it links to.
By default the node at point; with a prefix argument, or when point
is in no node, read the node from the minibuffer.  Linked notes
are followed `orgkit-read-depth' hops within `orgkit-read-budget'
tokens.  The result is shown in a read-only Org buffer, which is
returned."
  (interactive (list (if current-prefix-arg
                         (orgkit--read-node-id "orgkit read: ")
                       (orgkit--read-id "orgkit read: "))))
  (let* ((root (orgkit--notes-directory))
         (docs (orgkit--call "read" `((ids . ,(vector id))
                                      (depth . ,orgkit-read-depth)
                                      (budget . ,orgkit-read-budget))))
         (buffer (get-buffer-create "*orgkit-read*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (dolist (doc docs)
          (orgkit--insert-doc root doc))
        (let ((org-startup-folded 'showeverything))
          (org-mode))
        (orgkit--warnings-header)
        (setq orgkit--read-docs docs)
        (setq-local revert-buffer-function
                    (lambda (&rest _) (save-selected-window (orgkit-read id))))
        (setq default-directory (file-name-as-directory root))
        (add-hook 'org-open-at-point-functions #'orgkit--open-id-link nil t)
        (orgkit-read-mode 1)
        (set-buffer-modified-p nil)
        (setq buffer-read-only t)
        (goto-char (point-min))))
    (pop-to-buffer buffer)
    buffer))

(defun orgkit--insert-doc (root doc)
  "Insert the note DOC read by orgkit, under a line naming it (ROOT)."
  (let-alist doc
    (unless (bobp) (insert "\n"))
    (insert "───── "
            (org-link-make-string
             (format "file:%s::%d" (expand-file-name .file root) .line)
             .title)
            (format "  (%s:%d%s)\n" .file .line
                    (if .via (format ", depth %d via %s" .depth .via) "")))
    (put-text-property (line-beginning-position 0) (point) 'orgkit-id .id)
    (insert .content)
    (unless (bolp) (insert "\n"))))

(defun orgkit--open-id-link ()
  "Follow the id link at point through orgkit; for `org-open-at-point'."
  (let ((context (org-element-context)))
    (when (and (eq (org-element-type context) 'link)
               (equal (org-element-property :type context) "id"))
      (let* ((id (org-element-property :path context))
             (root (orgkit--notes-directory))
             (doc (or (cl-find id orgkit--read-docs
                               :key (lambda (d) (alist-get 'id d)) :test #'equal)
                      (car (orgkit--call "read" `((ids . ,(vector id))))))))
        (orgkit--visit root (alist-get 'file doc) (alist-get 'line doc))
        t))))

;;;###autoload
(defun orgkit-open (handle)
  "Visit the note HANDLE names and return its buffer.
HANDLE is a node ID, or the locator orgkit gives a file or heading
without an ID: FILE.org, FILE.org::*Heading or FILE.org::LINE, the
path relative to the notes directory."
  (interactive (list (read-string "orgkit open (ID or locator): " nil 'orgkit-node-history)))
  (when (string-blank-p handle)
    (user-error "orgkit: nothing to open"))
  (let* ((root (orgkit--notes-directory))
         (doc (car (orgkit--call "read" `((ids . ,(vector (string-trim handle))))))))
    (orgkit--visit root (alist-get 'file doc) (alist-get 'line doc))))

;;;; Editing: new notes, tangling

;;;###autoload
(defun orgkit-new-note (title &optional tags)
  "Create a note called TITLE with a fresh ID and visit it.
With a prefix argument, also read TAGS, a comma-separated list.
The file is named as org-roam names new notes.  Return orgkit's
description of the note: its id, file and title."
  (interactive (list (read-string "orgkit new note: ")
                     (and current-prefix-arg (read-string "Tags (a,b): "))))
  (when (string-blank-p title)
    (user-error "orgkit: a note needs a title"))
  (let* ((root (orgkit--notes-directory))
         (tags (and tags (vconcat (split-string tags "[ \t]*,[ \t]*" t))))
         (note (orgkit--call "new" `((title . ,title) (tags . ,tags)))))
    (find-file (expand-file-name (alist-get 'file note) root))
    (goto-char (point-max))
    note))

;;;###autoload
(defun orgkit-tangle (&optional file)
  "Tangle the org FILE (by default, the current buffer's file).
The buffer is saved first when modified.  orgkit writes what
`org-babel-tangle-file' would.  Return orgkit's answer."
  (interactive)
  (let ((file (or file buffer-file-name
                  (user-error "orgkit: this buffer visits no file"))))
    (let ((buffer (find-buffer-visiting file)))
      (when (and buffer (buffer-modified-p buffer))
        (with-current-buffer buffer (save-buffer))))
    (let* ((file (expand-file-name file))
           (answer (orgkit--tangle-call file))
           (written (orgkit--tangled-files answer)))
      (message "orgkit: tangled %d file%s%s%s" (length written)
               (if (= (length written) 1) "" "s")
               (if written (concat ": " (string-join written ", ")) "")
               (if orgkit-last-warnings (format " (%s)" (orgkit--warnings-text)) ""))
      answer)))

(defun orgkit--tangle-call (file)
  "Run `orgkit tangle FILE --json' in FILE's directory."
  (let ((orgkit-notes-directory (file-name-directory file)))
    (orgkit--call "tangle" `((files . ,(vector file))))))

(defun orgkit--tangled-files (answer)
  "The target files named in orgkit's tangle ANSWER."
  (mapcar (lambda (target) (alist-get 'target target))
          (alist-get 'targets answer)))

;;;; Grounded extraction

(defcustom orgkit-extract-schema "adr"
  "The schema `orgkit-extract' offers first: a name or a schema file."
  :type 'string)

(defvar orgkit-schema-history nil "Minibuffer history of schema names.")

(defun orgkit--extract-sources ()
  "The files to extract from: dired's marked files, else the current buffer's file.
A modified buffer is saved first, so orgkit reads what is shown."
  (if (derived-mode-p 'dired-mode)
      (or (and (fboundp 'dired-get-marked-files) (dired-get-marked-files))
          (user-error "orgkit: no files marked"))
    (let ((file (or buffer-file-name (user-error "orgkit: this buffer visits no file"))))
      (when (buffer-modified-p) (save-buffer))
      (list file))))

;;;###autoload
(defun orgkit-extract (sources schema)
  "Extract grounded claims from SOURCES under SCHEMA and list them.
Interactively, SOURCES are dired's marked files or the current
buffer's file, and SCHEMA is read (default `orgkit-extract-schema').
Each claim is a button visiting its quote in the source; `r' reads
the claim note and `b' lists its backlinks.  Return orgkit's answer."
  (interactive (list (orgkit--extract-sources)
                     (read-string (format "orgkit extract with schema (%s): " orgkit-extract-schema)
                                  nil 'orgkit-schema-history orgkit-extract-schema)))
  (let* ((root (orgkit--notes-directory))
         (files (mapcar #'expand-file-name sources))
         (answer (orgkit--call "extract" `((sources . ,(vconcat files)) (schema . ,schema)))))
    (orgkit--with-results-buffer "*orgkit-extract*" root (lambda () (orgkit-extract sources schema))
      (orgkit--insert-claims answer))
    answer))

(defun orgkit--insert-claims (answer)
  "Insert the claims of the extraction ANSWER, by source and dimension."
  (let-alist answer
    (insert (propertize (format "Run %s: %d claim%s, %d verified, %d dropped\n"
                                .run (length .claims) (if (= (length .claims) 1) "" "s")
                                .audit.verified .audit.dropped)
                        'face 'bold))
    (let (source dimension)
      (dolist (claim .claims)
        (let-alist claim
          (unless (equal .source source)
            (setq source .source dimension nil)
            (insert "\n" (propertize .source 'face 'orgkit-file) "\n"))
          (unless (equal .dimension dimension)
            (setq dimension .dimension)
            (insert "  " (propertize .dimension 'face 'bold) "\n"))
          (insert "    ")
          (insert-text-button (truncate-string-to-width
                               (replace-regexp-in-string "[ \t\n]+" " " .quote) 90 nil nil "…")
                              :type 'orgkit-quote 'orgkit-file .source 'orgkit-start .start)
          (put-text-property (line-beginning-position) (point) 'orgkit-id .claim_id)
          (insert "\n"))))))

(define-button-type 'orgkit-quote
  'action #'orgkit--visit-quote
  'follow-link t
  'help-echo "Visit this quote in its source")

(defun orgkit--visit-quote (button)
  "Visit the source of BUTTON's quote, at its start.
orgkit counts the start from 0 in characters, Emacs from 1."
  (find-file (button-get button 'orgkit-file))
  (goto-char (1+ (button-get button 'orgkit-start))))

;;;###autoload
(defun orgkit-claims (id)
  "List the claims linked from the hub note ID: by default, the note at point.
A hub note (written by `orgkit extract') links every claim made
from one source; each claim is a button visiting its note.
Return the buffer."
  (interactive (list (orgkit--read-id "orgkit claims of hub: ")))
  (let* ((root (orgkit--notes-directory))
         (links (orgkit--call "links" `((id . ,id))))
         (ids (delete-dups (delq nil (mapcar (lambda (l) (and (equal (alist-get 'type l) "id")
                                                               (alist-get 'dest l)))
                                             links))))
         (docs (and ids (orgkit--call "read" `((ids . ,(vconcat ids))))))
         (claims (cl-remove-if-not (lambda (d) (string-match-p "/claims/" (alist-get 'file d))) docs)))
    (orgkit--with-results-buffer "*orgkit-claims*" root (lambda () (orgkit-claims id))
      (insert (propertize (format "Claims linked from %s: %d\n\n" id (length claims)) 'face 'bold))
      (dolist (doc claims)
        (let-alist doc
          (insert "  ")
          (orgkit--insert-hit root .title .file .line .id)
          (insert "\n")))
      (unless claims
        (insert "  No claims: is point in a hub note of an extraction run?\n")))))
;;;; Feedback: the guidance file

;;;###autoload
(defun orgkit-guidance ()
  "Visit the guidance file that `orgkit evolve' writes from corrections.
Its bullets, by extractor and node type, go into the extractors'
prompts when they run with --use-extraction-feedback.  Edit them
freely: an edited bullet is kept, a deleted one stays deleted
until its cluster gets new corrections.  Return the file's name."
  (interactive)
  (let* ((answer (orgkit--call "guidance" nil))
         (file (alist-get 'path answer)))
    (find-file file)
    (unless (eq (alist-get 'exists answer) t)
      (message "orgkit: no guidance yet; `orgkit evolve' writes it from corrections"))
    file))
;;;; Review of the memory flow's proposals

(defvar orgkit-review-buffer "*orgkit-review*"
  "The name of the buffer `orgkit-review' shows.")

(defconst orgkit--editable-fields
  '(("new" . body) ("append" . text) ("link" . description) ("tag" . tag))
  "For each kind of proposal, the payload field a reviewer edits.")

(defvar orgkit-review-mode-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map special-mode-map)
    (define-key map (kbd "n") #'orgkit-review-next)
    (define-key map (kbd "p") #'orgkit-review-previous)
    (define-key map (kbd "a") #'orgkit-review-accept)
    (define-key map (kbd "e") #'orgkit-review-edit)
    (define-key map (kbd "r") #'orgkit-review-reject)
    (define-key map (kbd "u") #'orgkit-review-undo)
    map)
  "Keymap of `orgkit-review-mode'.")

(define-derived-mode orgkit-review-mode special-mode "orgkit-review"
  "Major mode for reviewing the proposals of orgkit's librarian.
Each pending proposal is shown with the diff accepting it makes.
\\{orgkit-review-mode-map}"
  (setq truncate-lines t))

;;;###autoload
(defun orgkit-review ()
  "List the pending proposals with their diffs; accept, edit or reject them.
Return the buffer."
  (interactive)
  (let ((root (orgkit--notes-directory))
        (proposals (orgkit--call "review_list" '((diff . t)))))
    (with-current-buffer (get-buffer-create orgkit-review-buffer)
      (let ((inhibit-read-only t))
        (erase-buffer)
        (orgkit-review-mode)
        (orgkit--warnings-header)
        (setq default-directory (file-name-as-directory root))
        (setq-local revert-buffer-function (lambda (&rest _) (orgkit-review)))
        (insert (propertize (format "Pending proposals: %d  (a accept, e edit, r reject, u undo a batch, g refresh)\n"
                                    (length proposals))
                            'face 'bold))
        (dolist (proposal proposals)
          (orgkit--insert-proposal proposal))
        (goto-char (point-min))
        (orgkit-review-next)))
    (pop-to-buffer orgkit-review-buffer)
    (get-buffer orgkit-review-buffer)))

(defun orgkit--insert-proposal (proposal)
  "Insert PROPOSAL (an alist from `review_list') with its diff."
  (let-alist proposal
    (let ((start (point)))
      (insert "\n" (propertize (format "%s %s" .kind .summary) 'face 'orgkit-file) "\n")
      (insert (propertize (format "  %s, deposit %s, chunks %s\n" .id .deposit
                                  (mapconcat (lambda (c) (format "%s" c)) .chunks ","))
                          'face 'orgkit-detail))
      (when .reason
        (insert (propertize (format "  %s\n" .reason) 'face 'warning)))
      (when .error
        (insert (propertize (format "  cannot apply now: %s\n" .error) 'face 'error)))
      (dolist (line (split-string (or .diff "") "\n" t))
        (insert (propertize line 'face (orgkit--diff-face line)) "\n"))
      (put-text-property start (point) 'orgkit-proposal proposal))))

(defun orgkit--diff-face (line)
  "The face of a unified-diff LINE."
  (cond ((string-prefix-p "+++" line) 'bold)
        ((string-prefix-p "---" line) 'bold)
        ((string-prefix-p "+" line) 'success)
        ((string-prefix-p "-" line) 'error)
        ((string-prefix-p "@@" line) 'orgkit-detail)))

(defun orgkit--proposal-at-point ()
  "The proposal shown at point, or a `user-error'."
  (or (get-text-property (point) 'orgkit-proposal)
      (user-error "orgkit: no proposal here")))

(defun orgkit--review-move (change-at start)
  "Go to the proposal found by CHANGE-AT (a property-change search) from START."
  (let ((here (funcall change-at start 'orgkit-proposal)))
    (when (and here (not (get-text-property here 'orgkit-proposal)))
      (setq here (funcall change-at here 'orgkit-proposal)))
    (when here
      (goto-char here)
      (forward-line 1))))

(defun orgkit-review-next ()
  "Move to the next proposal."
  (interactive)
  (orgkit--review-move #'next-single-property-change (line-end-position)))

(defun orgkit-review-previous ()
  "Move to the previous proposal."
  (interactive)
  (orgkit--review-move #'previous-single-property-change (line-beginning-position)))

(defun orgkit--review-decide (op message &rest args)
  "Ask for OP on the proposal at point with ARGS, say MESSAGE, show the list again."
  (let* ((proposal (orgkit--proposal-at-point))
         (answer (orgkit--call op (append `((ids . ,(vector (alist-get 'id proposal)))) args))))
    (message "orgkit: %s (batch %s)" message (alist-get 'batch answer))
    (orgkit-review)
    answer))

(defun orgkit-review-accept ()
  "Accept the proposal at point."
  (interactive)
  (orgkit--review-decide "review_accept" "accepted"))

(defun orgkit-review-reject (why)
  "Reject the proposal at point, for the reason WHY (may be empty)."
  (interactive (list (read-string "Reject, because (optional): ")))
  (apply #'orgkit--review-decide "review_reject" "rejected"
         (unless (string-blank-p why) `((why . ,why)))))

(defun orgkit-review-undo (batch)
  "Revert the decisions of BATCH (when its files were not edited since)."
  (interactive
   (list (let ((batches (cl-remove-if (lambda (b) (or (alist-get 'undone_by b)
                                                      (equal (alist-get 'action b) "undo")))
                                      (orgkit--call "review_batches" nil))))
           (unless batches
             (user-error "orgkit: no batch to undo"))
           ;; Each batch is offered by what it did; the answer is its ID.
           (let* ((choices (mapcar (lambda (b)
                                     (cons (format "%s  %s" (or (alist-get 'title b) (alist-get 'action b))
                                                   (alist-get 'id b))
                                           (alist-get 'id b)))
                                   (reverse batches)))
                  (choice (completing-read "Undo batch: " choices nil t)))
             (or (cdr (assoc choice choices)) choice)))))
  (let ((answer (orgkit--call "review_undo" `((batch . ,batch)))))
    (message "orgkit: undone (batch %s)" (alist-get 'batch answer))
    (when (get-buffer orgkit-review-buffer)
      (with-current-buffer orgkit-review-buffer (orgkit-review)))
    answer))

(defvar-local orgkit--editing nil
  "In a proposal edit buffer: the proposal being edited.")

(defvar orgkit-review-edit-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'orgkit-review-edit-finish)
    (define-key map (kbd "C-c C-k") #'orgkit-review-edit-abort)
    map)
  "Keymap of `orgkit-review-edit-mode'.")

(define-minor-mode orgkit-review-edit-mode
  "Editing a proposal: \\[orgkit-review-edit-finish] accepts it as edited, \\[orgkit-review-edit-abort] gives up."
  :lighter " orgkit-edit")

(defun orgkit-review-edit ()
  "Edit the proposal at point in a buffer; \\`C-c C-c' accepts it as edited."
  (interactive)
  (let* ((proposal (orgkit--proposal-at-point))
         (field (cdr (assoc (alist-get 'kind proposal) orgkit--editable-fields))))
    (unless field
      (user-error "orgkit: a %s proposal has nothing to edit; accept or reject it"
                  (alist-get 'kind proposal)))
    (pop-to-buffer (get-buffer-create (format "*orgkit-edit %s*" (alist-get 'id proposal))))
    (erase-buffer)
    (insert (or (alist-get field (alist-get 'payload proposal)) ""))
    (org-mode)
    (orgkit-review-edit-mode 1)
    (setq orgkit--editing proposal)
    (goto-char (point-min))
    (message "Edit the %s; C-c C-c accepts it as edited, C-c C-k gives up" field)))

(defun orgkit-review-edit-finish ()
  "Accept the proposal being edited, as edited."
  (interactive)
  (let* ((proposal (or orgkit--editing (user-error "orgkit: not editing a proposal")))
         (answer (orgkit--call "review_edit" `((id . ,(alist-get 'id proposal))
                                               (text . ,(buffer-string)))))
         (buffer (current-buffer)))
    (quit-window t)
    (kill-buffer buffer)
    (message "orgkit: accepted as edited (batch %s)" (alist-get 'batch answer))
    (when (get-buffer orgkit-review-buffer)
      (with-current-buffer orgkit-review-buffer (orgkit-review)))
    answer))

(defun orgkit-review-edit-abort ()
  "Give up editing the proposal; nothing is decided."
  (interactive)
  (let ((buffer (current-buffer)))
    (quit-window t)
    (when (buffer-live-p buffer) (kill-buffer buffer))))

;;;; Keys

;;;###autoload
(defvar orgkit-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "s") #'orgkit-search)
    (define-key map (kbd "c") #'orgkit-scan)
    (define-key map (kbd "l") #'orgkit-recent)
    (define-key map (kbd "f") #'orgkit-find-node)
    (define-key map (kbd "i") #'orgkit-insert-link)
    (define-key map (kbd "b") #'orgkit-backlinks)
    (define-key map (kbd "r") #'orgkit-read)
    (define-key map (kbd "o") #'orgkit-open)
    (define-key map (kbd "n") #'orgkit-new-note)
    (define-key map (kbd "t") #'orgkit-tangle)
    (define-key map (kbd "x") #'orgkit-extract)
    (define-key map (kbd "h") #'orgkit-claims)
    (define-key map (kbd "g") #'orgkit-guidance)
    (define-key map (kbd "v") #'orgkit-review)
    map)
  "Keymap of orgkit's commands, for a prefix key of your choice:
\(global-set-key (kbd \"C-c o\") orgkit-command-map).")

(provide 'orgkit)
;;; orgkit.el ends here
