;;; emacs_tangle.el --- tangle many org files in one batch Emacs  -*- lexical-binding: t; -*-
;; Reads job lines "HOME<TAB>ORG-FILE" from the file named by $ORGKIT_TANGLE_JOBS and tangles
;; each with `org-babel-tangle-file', the way a user with the common Babel languages would.
;; Prints one line per job: "OK<TAB>file" or "ERR<TAB>file<TAB>message".
(require 'org)
(require 'ob-tangle)
(setq make-backup-files nil)
(setq enable-local-variables nil)
(org-babel-do-load-languages
 'org-babel-load-languages
 '((emacs-lisp . t) (python . t) (shell . t) (C . t) (js . t) (java . t)
   (lisp . t) (lua . t) (ruby . t) (perl . t) (sql . t) (css . t) (haskell . t)
   (clojure . t) (scheme . t) (makefile . t) (awk . t) (sed . t) (latex . t)))
(let ((jobs (with-temp-buffer
              (insert-file-contents (getenv "ORGKIT_TANGLE_JOBS"))
              (split-string (buffer-string) "\n" t))))
  (dolist (job jobs)
    (let* ((parts (split-string job "\t"))
           (home (nth 0 parts))
           (file (nth 1 parts)))
      (setenv "HOME" home)
      (setq abbreviated-home-dir nil)
      (condition-case err
          (let ((default-directory (file-name-directory file)))
            (org-babel-tangle-file file)
            (princ (format "OK\t%s\n" file)))
        (error (princ (format "ERR\t%s\t%s\n" file
                              (replace-regexp-in-string
                               "\n" " " (error-message-string err)))))))))
