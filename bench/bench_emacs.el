;;; bench_emacs.el --- How fast orgkit-search answers from the warm server  -*- lexical-binding: t; -*-

;;; Commentary:

;; Copies the braindump corpus to a temporary directory, indexes it, starts
;; `orgkit serve' through orgkit.el, warms it with one search, then times
;; `orgkit-search' (the minibuffer answered with the first result) for a set
;; of queries, several rounds each.  Two numbers per search: the request
;; alone (send, wait, parse the JSON) and the whole command (request,
;; completion, visiting the file at the line).  Last, each query once
;; more as the command, ORGKIT_BENCH_PAUSE seconds apart (default 1.5), as a
;; person searches: then the server checks the files for edits first.
;;
;;   emacs --batch -q -l editors/orgkit.el -l bench/bench_emacs.el
;;
;; Environment: ORGKIT_BENCH_MODE (lexical, hybrid or dense; default hybrid
;; when ORGKIT_MODEL_PATH is set, else lexical), ORGKIT_BENCH_ROUNDS
;; (default 5), ORGKIT_BENCH_CORPUS (default ../shared/corpora/braindump
;; beside the repository), ORGKIT_BENCH_DIR (keep the copy and its index
;; there between runs; by default a temporary directory, deleted after).
;; The `orgkit' program must be on PATH.

;;; Code:

(require 'cl-lib)
(require 'orgkit)

(defconst orgkit-bench--repo
  (file-name-directory (directory-file-name
                        (file-name-directory (or load-file-name buffer-file-name))))
  "The repository holding this script.")

(defconst orgkit-bench--queries
  '("reinforcement learning" "mutual information" "spiking neural networks"
    "C programming language" "negotiation" "game design" "financial markets"
    "robot grasping" "unsupervised representation learning" "web frameworks"
    "dopamine reward" "base rate")
  "The queries timed.")

(defun orgkit-bench--env (name default)
  "The environment variable NAME, or DEFAULT when unset or empty."
  (let ((value (getenv name)))
    (if (and value (not (string-empty-p value))) value default)))

(defun orgkit-bench--ms (thunk)
  "Call THUNK; return the milliseconds it took."
  (let ((start (float-time)))
    (funcall thunk)
    (* 1000 (- (float-time) start))))

(defun orgkit-bench--stats (times)
  "Median, 90th percentile and maximum of TIMES, as a string."
  (let* ((sorted (sort (copy-sequence times) #'<))
         (n (length sorted)))
    (format "median %6.1f ms   p90 %6.1f ms   max %6.1f ms   (n=%d)"
            (nth (/ n 2) sorted)
            (nth (min (1- n) (floor (* 0.9 n))) sorted)
            (car (last sorted)) n)))

(defun orgkit-bench-run ()
  "Run the benchmark and print the results."
  (let* ((corpus (orgkit-bench--env "ORGKIT_BENCH_CORPUS"
                                    (expand-file-name "../shared/corpora/braindump"
                                                      orgkit-bench--repo)))
         (mode (orgkit-bench--env "ORGKIT_BENCH_MODE"
                                  (if (getenv "ORGKIT_MODEL_PATH") "hybrid" "lexical")))
         (rounds (string-to-number (orgkit-bench--env "ORGKIT_BENCH_ROUNDS" "5")))
         (keep (orgkit-bench--env "ORGKIT_BENCH_DIR" nil))
         (dir (if keep (expand-file-name keep) (make-temp-file "orgkit-bench-" t)))
         (notes (expand-file-name "braindump" dir))
         (orgkit-notes-directory notes)
         (orgkit-search-mode mode)
         (orgkit-timeout 120)
         (completing-read-function
          (lambda (_prompt collection &rest _) (car (all-completions "" collection))))
         (inhibit-message t)
         requests commands)
    (unwind-protect
        (progn
          (unless (file-directory-p notes)
            (make-directory dir t)
            (copy-directory corpus notes nil t t))
          (princ (format "corpus: %s (%d org files), mode: %s, model: %s\n"
                         corpus (length (directory-files-recursively notes "\\.org\\'"))
                         mode (or (getenv "ORGKIT_MODEL_PATH") "none")))
          (let ((index-ms
                 (orgkit-bench--ms
                  (lambda ()
                    (let ((default-directory (file-name-as-directory notes)))
                      (unless (eql 0 (apply #'call-process orgkit-program nil nil nil
                                            "index" "--notes" notes
                                            (and (equal mode "lexical") '("--no-embed"))))
                        (error "orgkit index failed")))))))
            (princ (format "orgkit index: %.1f s\n" (/ index-ms 1000))))
          (let ((start-ms (orgkit-bench--ms
                           (lambda () (orgkit--call "search" `((query . "warm up")
                                                                (mode . ,mode))))))
                (proc orgkit--process))
            (unless (eq orgkit--last-transport 'server)
              (error "The search was not answered by orgkit serve"))
            (princ (format "first search (server start, model load): %.0f ms\n" start-ms))
            (dotimes (_ rounds)
              (dolist (query orgkit-bench--queries)
                (push (orgkit-bench--ms
                       (lambda () (orgkit--call "search" `((query . ,query)
                                                            (limit . ,orgkit-search-limit)
                                                            (mode . ,mode)))))
                      requests)
                (push (orgkit-bench--ms (lambda () (orgkit-search query))) commands)
                (unless (eq orgkit--last-transport 'server)
                  (error "A search was not answered by the server"))))
            (unless (eq proc orgkit--process)
              (error "The server was restarted during the benchmark")))
          (princ (format "search request, warm server: %s\n" (orgkit-bench--stats requests)))
          (princ (format "orgkit-search command:       %s\n" (orgkit-bench--stats commands)))
          ;; A person searches every few seconds, not back to back: with a
          ;; pause, the server checks the files for edits before answering.
          (let ((pause (string-to-number (orgkit-bench--env "ORGKIT_BENCH_PAUSE" "1.5")))
                spaced)
            (dolist (query orgkit-bench--queries)
              (sleep-for pause)
              (push (orgkit-bench--ms (lambda () (orgkit-search query))) spaced))
            (princ (format "orgkit-search, %.1f s apart: %s\n" pause
                           (orgkit-bench--stats spaced)))))
      (orgkit-stop-server)
      (dolist (buffer (buffer-list))
        (when (and (buffer-file-name buffer)
                   (string-prefix-p dir (buffer-file-name buffer)))
          (kill-buffer buffer)))
      (unless keep
        (delete-directory dir t)))))

(when noninteractive
  (orgkit-bench-run))

(provide 'bench_emacs)
;;; bench_emacs.el ends here
