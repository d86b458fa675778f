;;; orgkit-review-test.el --- ERT tests for M-x orgkit-review against the real orgkit  -*- lexical-binding: t; -*-

;;; Commentary:

;; Run with
;;
;;   emacs --batch -q -l ert -l editors/orgkit.el -l editors/test/orgkit-review-test.el \
;;         -f ert-run-tests-batch-and-exit
;;
;; with the `orgkit' program on PATH.  A deposit is made with the real
;; command line; its proposals are then reviewed in the buffer as a
;; person would: accepted, edited, rejected and undone.

;;; Code:

(require 'cl-lib)
(require 'ert)
(require 'org-id)
(require 'orgkit)

(defun orgkit-review-test--notes ()
  "A fresh notes directory with two related notes; return it."
  (let ((dir (make-temp-file "orgkit-review-" t)))
    (dolist (note `(("tangle.org" "Tangling code blocks"
                     "Tangling writes code blocks to files; :var header arguments are refused.")
                    ("noweb.org" "Noweb references"
                     "Noweb references share code between blocks when tangling.")))
      (with-temp-file (expand-file-name (nth 0 note) dir)
        (insert (format ":PROPERTIES:\n:ID:       %s\n:END:\n#+title: %s\n#+filetags: :literate:\n\n%s\n"
                        (org-id-uuid) (nth 1 note) (nth 2 note)))))
    dir))

(defun orgkit-review-test--deposit (dir)
  "Deposit a finding in DIR with the command line; return its JSON."
  (with-temp-buffer
    (should (eql 0 (call-process orgkit-program nil (list t nil) nil "deposit" "--notes" dir
                                 "--title" "Tangling and var" "--json" "--body"
                                 "When tangling code blocks, orgkit refuses :var because it would run code.\n\nNoweb references share code when tangling.")))
    (goto-char (point-min))
    (json-parse-buffer :object-type 'alist :array-type 'list)))

(defun orgkit-review-test--goto (text)
  "Move to the proposal whose header holds TEXT."
  (goto-char (point-min))
  (should (search-forward text nil t))
  (beginning-of-line))

(ert-deftest orgkit-review-test-accept-edit-reject-undo ()
  (let* ((dir (orgkit-review-test--notes))
         (orgkit-notes-directory dir)
         (orgkit-use-server nil)
         (deposit (orgkit-review-test--deposit dir))
         (file (expand-file-name (alist-get 'path deposit) dir)))
    (unwind-protect
        (with-current-buffer (orgkit-review)
          (should (eq major-mode 'orgkit-review-mode))
          (should (string-match-p "keep the deposited note" (buffer-string)))
          (should (string-match-p "^\\+- \\[\\[id:" (buffer-string)))
          ;; a: accept the deposit itself
          (orgkit-review-test--goto "keep the deposited note")
          (orgkit-review-accept)
          (should-not (string-match-p "keep the deposited note" (buffer-string)))
          ;; e: edit a link's description, then accept it as edited
          (orgkit-review-test--goto "link the deposit to 'Noweb references'")
          (orgkit-review-edit)
          (should orgkit-review-edit-mode)
          (erase-buffer)
          (insert "how noweb shares code")
          (orgkit-review-edit-finish)
          (should (string-match-p "\\]\\[how noweb shares code\\]\\]"
                                  (with-temp-buffer (insert-file-contents file) (buffer-string))))
          ;; r: reject a tag
          (set-buffer orgkit-review-buffer)
          (orgkit-review-test--goto "tag the deposit with literate")
          (orgkit-review-reject "not needed")
          (should-not (string-match-p "tag the deposit with literate" (buffer-string)))
          ;; u: undo the edit's batch
          (let* ((batches (orgkit--call "review_batches" nil))
                 (edit (cl-find-if (lambda (b) (equal (alist-get 'action b) "accept")) (reverse batches))))
            (orgkit-review-undo (alist-get 'id edit)))
          (should-not (string-match-p "how noweb shares code"
                                      (with-temp-buffer (insert-file-contents file) (buffer-string)))))
      (delete-directory dir t))))

(provide 'orgkit-review-test)
;;; orgkit-review-test.el ends here
