;;; orgkit-test.el --- ERT tests for orgkit.el against the real orgkit  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run with
;;
;;   emacs --batch -q -l ert -l editors/orgkit.el -l editors/test/orgkit-test.el \
;;         -f ert-run-tests-batch-and-exit
;;
;; with the `orgkit' program on PATH.  The tests build a small notes
;; directory of real org-roam notes (fresh UUIDs, id links between them),
;; drive every command as a user would (the minibuffer answered by the
;; test), and talk to the real `orgkit serve' and `orgkit' command line.

;;; Code:

(require 'cl-lib)
(require 'ert)
(require 'org-id)
(require 'orgkit)

;;;; The notes

(defvar orgkit-test--dir nil "The temporary notes directory, made once.")
(defvar orgkit-test--ids nil "Alist of the notes' symbolic names to their IDs.")
(defvar orgkit-test--commands (make-hash-table :test #'equal)
  "Which orgkit subcommands exist, as found out.")

(defun orgkit-test--id (name)
  "The ID of the note or heading called NAME in the test notes."
  (or (alist-get name orgkit-test--ids)
      (setf (alist-get name orgkit-test--ids) (org-id-uuid))))

(defun orgkit-test--write (file text)
  "Write TEXT to FILE in the test notes directory."
  (with-temp-file (expand-file-name file orgkit-test--dir)
    (insert text)))

(defun orgkit-test--has-command (name)
  "Non-nil when `orgkit NAME --help' succeeds."
  (let ((known (gethash name orgkit-test--commands 'unknown)))
    (when (eq known 'unknown)
      (setq known (eql 0 (call-process orgkit-program nil nil nil name "--help")))
      (puthash name known orgkit-test--commands))
    known))

(defun orgkit-test--notes ()
  "The test notes directory, created (and indexed) on first use."
  (unless orgkit-test--dir
    (setq orgkit-test--dir (make-temp-file "orgkit-ert-" t))
    (orgkit-test--write
     "alpha.org"
     (format ":PROPERTIES:
:ID:       %s
:ROAM_ALIASES: \"First letter\"
:END:
#+title: Alpha note
#+filetags: :greek:

Alpha is where the alphabet starts.

* Apples
:PROPERTIES:
:ID:       %s
:END:
Apples grow on trees.
** Apple pie
Baked with cinnamon.
" (orgkit-test--id 'alpha) (orgkit-test--id 'apples)))
    (orgkit-test--write
     "beta.org"
     (format ":PROPERTIES:
:ID:       %s
:END:
#+title: Beta note

Beta comes after [[id:%s][Alpha]].

* Bananas in detail
Bananas are yellow and curved.

* Cherries
:PROPERTIES:
:ID:       %s
:END:
Cherries are small, red and sweet.
" (orgkit-test--id 'beta) (orgkit-test--id 'alpha) (orgkit-test--id 'cherries)))
    (orgkit-test--write
     "gamma.org"
     (format ":PROPERTIES:
:ID:       %s
:END:
#+title: Gamma note

Gamma cites [[id:%s][the apples]].

#+begin_src python :tangle gamma.py
print(\"gamma\")
#+end_src

* Crème brûlée
Not a fruit.
" (orgkit-test--id 'gamma) (orgkit-test--id 'apples)))
    (orgkit-test--write
     "plain.org"
     "* Quince jelly
Quinces need a long boiling before they set.
")
    (when (orgkit-test--has-command "index")
      (let ((default-directory (file-name-as-directory orgkit-test--dir)))
        (unless (eql 0 (call-process orgkit-program nil nil nil
                                     "index" "--no-embed" "--notes" orgkit-test--dir))
          (error "orgkit index failed")))))
  orgkit-test--dir)

(defun orgkit-test--cleanup ()
  "Stop the server and delete the test notes."
  (orgkit-stop-server)
  (when orgkit-test--dir
    (delete-directory orgkit-test--dir t)
    (setq orgkit-test--dir nil)))

(add-hook 'kill-emacs-hook #'orgkit-test--cleanup)

(defun orgkit-test--kill-note-buffers ()
  "Kill the buffers visiting test notes and orgkit's own buffers."
  (dolist (buffer (buffer-list))
    (let ((file (buffer-file-name buffer)))
      (when (or (and file orgkit-test--dir
                     (string-prefix-p (file-truename orgkit-test--dir)
                                      (file-truename file)))
                (string-prefix-p "*orgkit-" (buffer-name buffer)))
        (with-current-buffer buffer (set-buffer-modified-p nil))
        (kill-buffer buffer)))))

(defmacro orgkit-test--with-notes (&rest body)
  "Run BODY with orgkit pointed at the test notes, then tidy up buffers."
  (declare (indent 0) (debug t))
  `(let ((orgkit-notes-directory (orgkit-test--notes))
         (orgkit-use-server t)
         (orgkit-search-mode "lexical")
         (orgkit-timeout 30))
     (setq orgkit--server-rest-until nil)
     (unwind-protect (progn ,@body)
       (orgkit-test--kill-note-buffers))))

(defvar orgkit-test--candidates nil
  "The candidates offered by the last answered `completing-read'.")

(defvar orgkit-test--collection nil
  "The collection of the last answered `completing-read'.")

(defmacro orgkit-test--choosing (regexp &rest body)
  "Run BODY answering `completing-read' with the first candidate matching REGEXP.
When REGEXP is a list (INPUT), answer INPUT as typed."
  (declare (indent 1) (debug t))
  `(let ((completing-read-function
          (lambda (_prompt collection &rest _)
            (setq orgkit-test--collection collection)
            (setq orgkit-test--candidates (all-completions "" collection))
            (let ((answer ,regexp))
              (if (consp answer)
                  (car answer)
                (or (cl-find-if (lambda (c) (string-match-p answer c))
                                orgkit-test--candidates)
                    (error "No candidate matches %S in %S"
                           answer orgkit-test--candidates)))))))
     ,@body))

(defmacro orgkit-test--typing (input &rest body)
  "Run BODY with every `read-string' answered by INPUT."
  (declare (indent 1) (debug t))
  `(cl-letf (((symbol-function 'read-string) (lambda (&rest _) ,input)))
     ,@body))

(defun orgkit-test--visit (file)
  "Visit FILE of the test notes and return its buffer."
  (find-file (expand-file-name file (orgkit-test--notes))))

(defun orgkit-test--goto (text)
  "Move point to the start of the line containing TEXT."
  (goto-char (point-min))
  (search-forward text)
  (beginning-of-line))

(defun orgkit-test--at (file text)
  "Non-nil when the current buffer visits FILE with point on TEXT's line."
  (and buffer-file-name
       (equal (file-name-nondirectory buffer-file-name) file)
       (string-match-p (regexp-quote text)
                       (buffer-substring (line-beginning-position) (line-end-position)))))

(defun orgkit-test--eventually (predicate &optional seconds)
  "Call PREDICATE until it returns non-nil, for at most SECONDS (5)."
  (let ((deadline (+ (float-time) (or seconds 5)))
        value)
    (while (and (not (setq value (funcall predicate)))
                (< (float-time) deadline))
      (sleep-for 0.25))
    value))

(defun orgkit-test--skip-unless-server ()
  "Skip the test when this orgkit has no `serve'."
  (unless (orgkit-test--has-command "serve")
    (ert-skip "this orgkit has no `serve' command")))

(defun orgkit-test--error-message (form-thunk)
  "Call FORM-THUNK, which must signal a `user-error'; return its message."
  (condition-case err
      (progn (funcall form-thunk) nil)
    (user-error (error-message-string err))))

;;;; Commands

(ert-deftest orgkit-test-search ()
  "`orgkit-search' offers title, outline path and score, and visits the choice."
  (unless (orgkit-test--has-command "search")
    (ert-skip "this orgkit has no `search' command"))
  (orgkit-test--with-notes
    (orgkit-test--typing "cherries red"
      (orgkit-test--choosing "\\`Cherries"
        (let ((result (call-interactively #'orgkit-search)))
          (should (equal (alist-get 'id result) (orgkit-test--id 'cherries)))
          (should (orgkit-test--at "beta.org" "* Cherries")))))
    (let ((label (cl-find-if (lambda (c) (string-prefix-p "Cherries" c))
                             orgkit-test--candidates)))
      (should (string-match-p "beta\\.org" label))
      (should (string-match-p "[0-9]\\.[0-9]\\{3\\}\\'" label))
      ;; Completion UIs keep orgkit's ranking and show the snippet.
      (let ((metadata (completion-metadata "" orgkit-test--collection nil)))
        (should (eq (completion-metadata-get metadata 'display-sort-function) #'identity))
        (should (string-match-p "sweet" (funcall (completion-metadata-get
                                                  metadata 'annotation-function)
                                                 label)))))
    (when (orgkit-test--has-command "serve")
      (should (eq orgkit--last-transport 'server)))))

(ert-deftest orgkit-test-search-and-open-a-heading-without-an-id ()
  "A heading without an ID is found, visited, and opened again by its locator."
  (orgkit-test--with-notes
    (orgkit-test--typing "quinces boiling"
      (orgkit-test--choosing "\\`Quince jelly"
        (let ((result (call-interactively #'orgkit-search)))
          (should (null (alist-get 'id result)))
          (should (equal (alist-get 'locator result) "plain.org::*Quince jelly"))
          (should (orgkit-test--at "plain.org" "* Quince jelly")))))
    (orgkit-test--kill-note-buffers)
    (orgkit-open "plain.org::*Quince jelly")
    (should (orgkit-test--at "plain.org" "* Quince jelly"))
    (should (string-match-p "inside the notes"
                            (orgkit-test--error-message
                             (lambda () (orgkit-open "../elsewhere.org::1")))))))

(ert-deftest orgkit-test-filters-narrow-search-and-scan ()
  "With a prefix argument, search and scan ask for filters and keep to them."
  (orgkit-test--with-notes
    (let ((answers (list "note" "greek" "" "" "" "")))
      (cl-letf (((symbol-function 'read-string) (lambda (&rest _) (pop answers)))
                (current-prefix-arg '(4)))
        (with-current-buffer (call-interactively #'orgkit-scan)
          (should (string-match-p "Alpha note" (buffer-string)))
          (should-not (string-match-p "Beta note\\|Gamma note" (buffer-string))))))
    (orgkit-test--choosing "\\`Beta note"
      (let ((result (orgkit-search "note" '((folder . "beta.org")))))
        (should (equal (alist-get 'file result) "beta.org"))
        (should (cl-every (lambda (c) (string-match-p "beta\\.org" c)) orgkit-test--candidates))))))

(ert-deftest orgkit-test-search-says-what-is-not-relevant ()
  "A result below the relevance floor says so; one without a verdict does not."
  (let ((below '((title . "Cherries") (file . "beta.org") (score . 0.25) (relevant)))
        (above '((title . "Cherries") (file . "beta.org") (score . 0.75) (relevant . t)))
        (older '((title . "Cherries") (file . "beta.org") (score . 0.75))))
    (should (string-match-p "0\\.250  not relevant\\'" (orgkit--search-label below)))
    (should-not (string-match-p "not relevant" (orgkit--search-label above)))
    (should-not (string-match-p "not relevant" (orgkit--search-label older)))
    (should-not (orgkit--relevant-p below))
    (should (orgkit--relevant-p older))))

(ert-deftest orgkit-test-warnings-and-corrections-reach-the-user ()
  "What orgkit says beside its answer reaches the user: a query read as
corrected in the search prompt and the echo area, a warning in the header
line of the buffer showing the answer, a warning of the command line
\(tangling) in the echo area."
  (orgkit-test--skip-unless-server)
  (orgkit-test--with-notes
    (let ((plain (make-temp-file "orgkit-plain-" nil ".org" "#+title: Plain\n\nNo code here.\n"))
          prompt seen)
      (unwind-protect
          (cl-letf (((symbol-function 'message)
                     (lambda (format-string &rest args)
                       (when format-string
                         (push (apply #'format-message format-string args) seen)))))
            (orgkit-test--typing "cheries red"
              (let ((completing-read-function
                     (lambda (asked collection &rest _)
                       (setq prompt asked)
                       (car (all-completions "" collection)))))
                (call-interactively #'orgkit-search)))
            (should (eq orgkit--last-transport 'server))
            (should (string-match-p "(showing results for 'cherries red'): \\'" prompt))
            (should (member "orgkit: showing results for 'cherries red'" seen))
            (with-current-buffer (orgkit-test--typing "zzzqqq" (call-interactively #'orgkit-scan))
              (should (string-match-p "\\`orgkit: no headline, title or alias matches 'zzzqqq'"
                                      (format "%s" header-line-format))))
            (setq seen nil)
            (with-current-buffer (find-file-noselect plain)
              (orgkit-tangle)
              (kill-buffer))
            (should (eq orgkit--last-transport 'cli))
            (should (member "orgkit: no blocks to tangle" seen))
            (should (member "orgkit: tangled 0 files (no blocks to tangle)" seen)))
        (delete-file plain)))))

(ert-deftest orgkit-test-scan ()
  "`orgkit-scan' lists matching headlines as buttons that visit them."
  (orgkit-test--with-notes
    (let ((buffer (orgkit-test--typing "apple" (call-interactively #'orgkit-scan))))
      (with-current-buffer buffer
        (should (eq major-mode 'orgkit-results-mode))
        (should (string-match-p "alpha\\.org" (buffer-string)))
        (should (string-match-p "\\*\\* Apples > Apple pie" (buffer-string)))
        (should-not (string-match-p "beta\\.org" (buffer-string)))
        ;; Point starts on the first button; the heading's node is at hand.
        (should (button-at (point)))
        (should (equal (get-text-property (point) 'orgkit-id) (orgkit-test--id 'apples)))
        (push-button)
        (should (orgkit-test--at "alpha.org" "* Apples"))))
    ;; Words beyond ASCII reach orgkit and come back intact, either way.
    (dolist (orgkit-use-server '(t nil))
      (should (equal (mapcar (lambda (hit) (alist-get 'title hit))
                             (orgkit--call "scan" '((query . "brûlée"))))
                     '("Crème brûlée"))))))

(ert-deftest orgkit-test-recent ()
  "`orgkit-recent' lists the notes newest first, each a button visiting it; with
a prefix argument, a folder or glob narrows the list."
  (orgkit-test--with-notes
    (let ((now (float-time)))
      (cl-loop for file in '("gamma.org" "alpha.org" "plain.org" "beta.org")
               for age from 0
               do (set-file-times (expand-file-name file orgkit-notes-directory) (- now (* 60 age)))))
    (with-current-buffer (orgkit-recent)
      (should (eq major-mode 'orgkit-results-mode))
      (let ((text (buffer-string)))
        (should (< (string-match "Gamma note" text) (string-match "Alpha note" text)
                   (string-match "plain\\.org" text) (string-match "Beta note" text))))
      (should (equal (get-text-property (point) 'orgkit-id) (orgkit-test--id 'gamma)))
      (push-button)
      (should (orgkit-test--at "gamma.org" ":PROPERTIES:")))
    (let ((answers (list "beta.org" "" "")))
      (cl-letf (((symbol-function 'read-string) (lambda (&rest _) (pop answers)))
                (current-prefix-arg '(4)))
        (with-current-buffer (call-interactively #'orgkit-recent)
          (should (string-match-p "Beta note" (buffer-string)))
          (should-not (string-match-p "Alpha note\\|Gamma note" (buffer-string))))))))

(ert-deftest orgkit-test-find-node ()
  "`orgkit-find-node' finds nodes by title and by alias."
  (orgkit-test--with-notes
    (orgkit-test--choosing "\\`First letter"
      (let ((node (call-interactively #'orgkit-find-node)))
        (should (equal (alist-get 'id node) (orgkit-test--id 'alpha)))
        (should (orgkit-test--at "alpha.org" ":PROPERTIES:"))))
    (should (cl-some (lambda (c) (string-match-p "\\`Apples  (Alpha note)\\|\\`Apples\\b" c))
                     orgkit-test--candidates))
    (orgkit-test--choosing "\\`Apples"
      (call-interactively #'orgkit-find-node)
      (should (orgkit-test--at "alpha.org" "* Apples")))))

(ert-deftest orgkit-test-insert-link ()
  "`orgkit-insert-link' inserts an id link at point, or around the region."
  (orgkit-test--with-notes
    (with-temp-buffer
      (org-mode)
      (insert "See ")
      (orgkit-test--choosing "\\`Beta note"
        (should (equal (call-interactively #'orgkit-insert-link) (orgkit-test--id 'beta))))
      (should (equal (buffer-string)
                     (format "See [[id:%s][Beta note]]" (orgkit-test--id 'beta))))
      (erase-buffer)
      (insert "the fruit here")
      (transient-mark-mode 1)
      (set-mark 5)
      (goto-char 10)
      (activate-mark)
      (orgkit-test--choosing "\\`Apples"
        (call-interactively #'orgkit-insert-link))
      (should (equal (buffer-string)
                     (format "the [[id:%s][fruit]] here" (orgkit-test--id 'apples)))))))

(ert-deftest orgkit-test-backlinks ()
  "`orgkit-backlinks' finds the node at point, up to the file's own drawer."
  (orgkit-test--with-notes
    ;; In a heading without an ID: the nearest ancestor with one (Apples).
    (with-current-buffer (orgkit-test--visit "alpha.org")
      (orgkit-test--goto "Baked with cinnamon")
      (with-current-buffer (call-interactively #'orgkit-backlinks)
        (should (string-match-p "Backlinks to Apples: 1" (buffer-string)))
        (should (string-match-p "Gamma note" (buffer-string)))
        (should (button-at (point)))
        (push-button)
        (should (orgkit-test--at "gamma.org" "Gamma cites"))))
    ;; Before the first heading: the file's node.
    (with-current-buffer (orgkit-test--visit "alpha.org")
      (orgkit-test--goto "Alpha is where")
      (with-current-buffer (call-interactively #'orgkit-backlinks)
        (should (string-match-p "Backlinks to Alpha note: 1" (buffer-string)))
        (should (string-match-p "Beta note" (buffer-string)))))))

(ert-deftest orgkit-test-read ()
  "`orgkit-read' shows the node at point and the notes it links to, read-only."
  (orgkit-test--with-notes
    (with-current-buffer (orgkit-test--visit "beta.org")
      (orgkit-test--goto "Bananas are yellow")
      (let ((orgkit-read-depth 1))
        (with-current-buffer (call-interactively #'orgkit-read)
          (should (derived-mode-p 'org-mode))
          (should buffer-read-only)
          (should (string-match-p "Bananas are yellow" (buffer-string)))
          ;; The linked note comes along, under a line naming it.
          (should (string-match-p "Alpha is where the alphabet starts" (buffer-string)))
          (should (string-match-p "depth 1 via" (buffer-string)))
          (should-error (insert "x") :type 'buffer-read-only)
          ;; Its id links are followed through orgkit.
          (goto-char (point-min))
          (search-forward "[[id:")
          (org-open-at-point)
          (should (orgkit-test--at "alpha.org" ":PROPERTIES:")))))))

(ert-deftest orgkit-test-new-note ()
  "`orgkit-new-note' creates a note with an ID and visits it; nodes see it."
  (orgkit-test--with-notes
    (let* ((note (orgkit-test--typing "Crème brûlée notes" (call-interactively #'orgkit-new-note)))
           (file (expand-file-name (alist-get 'file note) orgkit-test--dir)))
      (unwind-protect
          (progn
            (should (string-match-p "\\`[0-9]\\{14\\}-creme_brulee_notes\\.org\\'"
                                    (alist-get 'file note)))
            (should (equal buffer-file-name file))
            (should (string-match-p (format ":ID: +%s" (alist-get 'id note)) (buffer-string)))
            (should (string-match-p "^#\\+title: Crème brûlée notes$" (buffer-string)))
            ;; The server sees the new note soon (it may check for edits
            ;; only every so often).
            (should (orgkit-test--eventually
                     (lambda ()
                       (cl-find (alist-get 'id note) (orgkit--call "nodes" nil)
                                :key (lambda (n) (alist-get 'id n)) :test #'equal)))))
        (orgkit-test--kill-note-buffers)
        (delete-file file)))))

(ert-deftest orgkit-test-guidance ()
  "`orgkit-guidance' visits the guidance file in the data directory."
  (orgkit-test--with-notes
    (let ((file (expand-file-name "orgkit-data/guidance.org" orgkit-test--dir)))
      (make-directory (file-name-directory file) t)
      (with-temp-file file
        (insert "* Extractor: extractor\n** Node Type: claim\n- Give numbers.\n"))
      (unwind-protect
          (progn
            (should (equal (file-truename (orgkit-guidance)) (file-truename file)))
            (should (equal (file-truename buffer-file-name) (file-truename file)))
            (should (string-match-p "Give numbers" (buffer-string))))
        (orgkit-test--kill-note-buffers)
        (delete-directory (file-name-directory file) t)))))

(ert-deftest orgkit-test-tangle ()
  "`orgkit-tangle' tangles the current file."
  (orgkit-test--with-notes
    (let ((target (expand-file-name "gamma.py" orgkit-test--dir)))
      (unwind-protect
          (with-current-buffer (orgkit-test--visit "gamma.org")
            (let ((answer (orgkit-tangle)))
              (should (equal (orgkit--tangled-files answer) '("gamma.py")))
              (should (file-exists-p target))
              (should (equal (with-temp-buffer
                               (insert-file-contents target)
                               (buffer-string))
                             "print(\"gamma\")\n"))))
        (when (file-exists-p target) (delete-file target))))))

;;;; Grounded extraction

(defun orgkit-test--search-offers (regexp)
  "Search for the words of the ADR's decision; non-nil when a result matches REGEXP."
  (setq orgkit-test--candidates nil)
  (ignore-error user-error  ; nothing found
    (orgkit-test--typing "keep the cache in SQLite"
      (orgkit-test--choosing "."
        (call-interactively #'orgkit-search))))
  (cl-some (lambda (c) (string-match-p regexp c)) orgkit-test--candidates))

(ert-deftest orgkit-test-extract-and-claims ()
  "`orgkit-extract' lists grounded claims of the current file; `orgkit-claims' lists a hub's."
  (orgkit-test--with-notes
    (let* ((source (make-temp-file "orgkit-adr-" nil ".md"
                                   "# Use SQLite\n\n## Status\n\nAccepted\n\n## Decision\n\nWe will keep the cache in SQLite.\n"))
           ;; The source lies outside the notes: a server extracts it only from a source root the user set.
           (orgkit-environment (list "ORGKIT_EXTRACTION=1"
                                     (concat "ORGKIT_EXTRACT_SOURCE_ROOTS=" (file-name-directory source))))
           (extractions (expand-file-name "extractions" orgkit-test--dir))
           (data (expand-file-name "orgkit-data" orgkit-test--dir)))
      (unwind-protect
          (progn
            (with-current-buffer (find-file source)
              (let ((answer (orgkit-test--typing "adr" (call-interactively #'orgkit-extract))))
                (should (= (length (alist-get 'claims answer)) 2))
                (with-current-buffer "*orgkit-extract*"
                  (should (string-match-p "decision" (buffer-string)))
                  (goto-char (point-min))
                  (search-forward "We will keep")
                  (push-button)
                  (should (looking-at "We will keep the cache in SQLite")))))
            (let ((hub (car (file-expand-wildcards (expand-file-name "*/hub-*.org" extractions)))))
              (with-current-buffer (find-file hub)
                (goto-char (point-min))
                (should (orgkit-test--eventually
                         (lambda ()
                           (with-current-buffer (call-interactively #'orgkit-claims)
                             (string-match-p "Claims linked from .*: 2" (buffer-string))))))))
            ;; Claims answer a search only in their scope, and a claim and its quote share one place.
            (let ((orgkit-search-scope "extractions"))
              (should (orgkit-test--eventually
                       (lambda ()
                         (orgkit-test--search-offers "cache in SQLite")))))
            (should (= 1 (cl-count-if (lambda (c) (string-match-p "keep the cache in SQLite" c))
                                      orgkit-test--candidates)))
            (let ((orgkit-search-scope nil))
              (should-not (orgkit-test--search-offers "cache in SQLite"))))
        (orgkit-test--kill-note-buffers)
        (when (get-file-buffer source) (kill-buffer (get-file-buffer source)))
        (delete-file source)
        (delete-directory extractions t)
        (delete-directory data t)))))

;;;; The server and the command line

(ert-deftest orgkit-test-server-restart ()
  "A server that dies is started again by the next request."
  (orgkit-test--skip-unless-server)
  (orgkit-test--with-notes
    (let* ((request `((id . ,(orgkit-test--id 'alpha))))
           (first (orgkit--call "backlinks" request))
           (proc orgkit--process))
      (should (eq orgkit--last-transport 'server))
      (should (equal (alist-get 'title (car first)) "Beta note"))
      (should (process-live-p proc))
      (delete-process proc)
      (should-not (process-live-p proc))
      (should (equal (orgkit--call "backlinks" request) first))
      (should (eq orgkit--last-transport 'server))
      (should (process-live-p orgkit--process))
      (should-not (eq orgkit--process proc)))))

(ert-deftest orgkit-test-server-answers-in-order ()
  "Requests sent together are answered in order, errors included."
  (orgkit-test--skip-unless-server)
  (orgkit-test--with-notes
    (let* ((proc (orgkit--server orgkit-test--dir))
           (a (orgkit--server-send proc "backlinks" `((id . ,(orgkit-test--id 'alpha)))))
           (b (orgkit--server-send proc "read" '((ids . ["no-such-id"]))))
           (c (orgkit--server-send proc "backlinks" `((id . ,(orgkit-test--id 'apples))))))
      (should (equal (alist-get 'title (car (orgkit--server-wait proc a))) "Beta note"))
      (should (string-match-p "no-such-id"
                              (orgkit-test--error-message
                               (lambda () (orgkit--server-wait proc b)))))
      (should (equal (alist-get 'title (car (orgkit--server-wait proc c))) "Gamma note"))
      (should (process-live-p proc)))))

(ert-deftest orgkit-test-filter-assembles-lines ()
  "The process filter joins partial lines, splits joined ones, and unwraps."
  (let ((proc (make-pipe-process :name "orgkit-test-pipe" :noquery t))
        (cells (list (cons nil nil) (cons nil nil) (cons nil nil) (cons nil nil))))
    (unwind-protect
        (progn
          (process-put proc 'orgkit-queue
                       (cl-loop for cell in cells for tag from 1 collect (cons tag cell)))
          (orgkit--filter proc "{\"result\": [{\"id\": \"x\"},")
          (should-not (car (nth 0 cells)))
          (orgkit--filter proc " 2], \"warnings\": []}\n{\"error\": \"unknown ID: y\"}\n[3")
          (should (equal (nth 0 cells) '(ok ((id . "x")) 2)))
          (should (equal (nth 1 cells) '(error . "unknown ID: y")))
          (should-not (car (nth 2 cells)))
          ;; A tagged response settles its own request, even out of turn.
          (orgkit--filter proc "]\n{\"result\": [], \"request\": 4}\n")
          (should (equal (nth 2 cells) '(ok 3)))
          (should (equal (nth 3 cells) '(ok)))
          (should-not (process-get proc 'orgkit-queue)))
      (delete-process proc))))

(ert-deftest orgkit-test-cli-fallback ()
  "When the server cannot run, requests are answered by one-shot calls."
  (orgkit-test--with-notes
    (let* ((wrapper (make-temp-file "orgkit-noserve-"))
           (real (executable-find orgkit-program))
           (expected (let ((orgkit-use-server nil)) (orgkit--call "nodes" nil))))
      (should (eq orgkit--last-transport 'cli))
      (unwind-protect
          (progn
            (with-temp-file wrapper
              (insert "#!/bin/sh\n"
                      ;; Reads the first request, then fails without answering.
                      "if [ \"$1\" = serve ]; then\n"
                      "  read -r request\n"
                      "  echo 'orgkit: error: no server here' >&2; exit 1\n"
                      "fi\n"
                      (format "exec %s \"$@\"\n" (shell-quote-argument real))))
            (set-file-modes wrapper #o755)
            (orgkit-stop-server)
            (let ((orgkit-program wrapper)
                  (inhibit-message t))
              (should (equal (orgkit--call "nodes" nil) expected))
              (should (eq orgkit--last-transport 'cli))
              ;; The failed server is not tried again for a while.
              (should (orgkit--server-resting-p))
              (should (equal (orgkit--call "backlinks" `((id . ,(orgkit-test--id 'alpha))))
                             (let ((orgkit-use-server nil))
                               (orgkit--call "backlinks" `((id . ,(orgkit-test--id 'alpha)))))))
              (should-not (process-live-p orgkit--process))))
        (orgkit-stop-server)
        (setq orgkit--server-rest-until nil)
        (delete-file wrapper)))))

(ert-deftest orgkit-test-unknown-id ()
  "An unknown ID reaches the user as orgkit's one-line message."
  (orgkit-test--with-notes
    (dolist (use-server (if (orgkit-test--has-command "serve") '(t nil) '(nil)))
      (let* ((orgkit-use-server use-server)
             (message (orgkit-test--error-message (lambda () (orgkit-read "no-such-id")))))
        (should message)
        (should (string-match-p "\\`orgkit: .*unknown ID.*no-such-id" message))
        (should-not (string-match-p "\n\\|Traceback\\|orgkit: error:" message))
        (should (eq orgkit--last-transport (if use-server 'server 'cli)))
        ;; The server survives its users' mistakes.
        (when use-server (should (process-live-p orgkit--process)))))))

(ert-deftest orgkit-test-parameters-come-from-the-registry ()
  "Requests are built from orgkit's operation registry, not from names of orgkit.el's own."
  (orgkit-test--with-notes
    (let* ((dir (orgkit--notes-directory))
           (search (orgkit--op dir "search")))
      ;; The real registry, as `{"op": "ops"}' or `orgkit ops --json' gives it.
      (should (equal (orgkit--op-parameters search)
                     '(query limit mode min_score scope exact tag folder todo since until no_update)))
      (should (equal (alist-get 'positional search) '("query")))
      (should (equal (orgkit--cli-args "search" '((query . "apples") (limit . 2)) dir search)
                     (list "search" "--limit" "2" "--notes" dir "--json" "--" "apples")))
      (should (equal (orgkit--cli-args "id_add" '((file . "a.org") (all . t)) dir
                                       (orgkit--op dir "id_add"))
                     (list "id" "add" "--all" "--notes" dir "--json" "--" "a.org")))
      ;; A field the registry does not list is refused before anything runs.
      (should (equal (orgkit-test--error-message
                      (lambda () (orgkit--call "search" '((query . "x") (colour . "red")))))
                     (concat "orgkit: search has no parameter colour (parameters: query, limit, mode, "
                             "min_score, scope, exact, tag, folder, todo, since, until, no_update)")))
      ;; Another registry, another command line: nothing is hard-coded.
      (let ((orgkit--registry
             (cons (orgkit--registry-key)
                   '(("search" . ((name . "search") (command "find" "notes") (notes . t)
                                  (positional "words") (options (top . "--top"))
                                  (parameters (properties (words) (top)))))))))
        (should (equal (orgkit--cli-args "search" '((words . "x y") (top . 3)) dir
                                         (orgkit--op dir "search"))
                       (list "find" "notes" "--top" "3" "--notes" dir "--json" "--" "x y")))
        (should (string-match-p "search has no parameter query"
                                (orgkit-test--error-message
                                 (lambda () (orgkit--call "search" '((query . "x")))))))))))

(ert-deftest orgkit-test-setup-errors ()
  "A missing notes directory or program is one clear line, not a backtrace."
  (let ((orgkit-notes-directory "/nonexistent/notes"))
    (should (equal (orgkit-test--error-message (lambda () (orgkit--call "nodes" nil)))
                   "orgkit: notes directory not found: /nonexistent/notes")))
  (orgkit-test--with-notes
    (let ((orgkit-program "/nonexistent/bin/orgkit")
          (inhibit-message t))
      (orgkit-stop-server)
      (unwind-protect
          (should (string-match-p "\\`orgkit: cannot run /nonexistent/bin/orgkit"
                                  (orgkit-test--error-message
                                   (lambda () (orgkit--call "nodes" nil)))))
        (setq orgkit--server-rest-until nil)))))

(provide 'orgkit-test)
;;; orgkit-test.el ends here
