package traymenu

import "fmt"

// LabelQuestions is the item, shown only while a server waits for the
// person's answer, whose submenu holds each question and its choices.
// It is the way to answer where notifications carry no actions (macOS,
// Windows, a Linux desktop without them).
func LabelQuestions(n int) string {
	if n == 1 {
		return "1 sandbox waits for your answer"
	}
	return fmt.Sprintf("%d sandboxes wait for your answer", n)
}

// LabelProposals is the item, shown only while changes to the person's
// files wait for review, that opens the window on them.
func LabelProposals(n int) string {
	if n == 1 {
		return "1 change waiting for review"
	}
	return fmt.Sprintf("%d changes waiting for review", n)
}

// Question is a server's question to the person, as the menu shows it.
type Question struct {
	ID string
	// Text says who asks for what ("Sandbox 3f2a9c01… (python, Claude
	// Desktop) wants to reach pypi.org:443.").
	Text string
	// Entries is what a yes grants, shown in the choices' labels.
	Entries string
	// Warnings are a line each for the entries that reach the person's
	// own machine or network, or many hosts (netproxy.Risk): shown under
	// the question, and granted for this sandbox only, never saved.
	Warnings []string
	// Saved are the entries "Always" writes into the config when there
	// are Warnings ("" then: none, and Always is not offered).
	Saved string
}

// The choices Actions.Answer is given.
const (
	ChoiceAllow  = "allow"
	ChoiceAlways = "always"
	ChoiceDeny   = "deny"
)

// Choice labels: the D-Bus tests click them by label.
func AllowLabel(q Question) string { return "Allow " + q.Entries + " for this sandbox" }
func AlwaysLabel(q Question) string {
	if len(q.Warnings) == 0 {
		return "Always allow " + q.Entries
	}
	return "Always allow " + q.Saved + " (the rest for this sandbox only)"
}
func DenyLabel(q Question) string { return "Deny " + q.Entries }

// questionsItem is the questions' item: for each question its text (not
// clickable), then Allow, Always allow and Deny.
func questionsItem(s State, a Actions) Item {
	it := Item{Label: LabelQuestions(len(s.Questions)), Hidden: len(s.Questions) == 0}
	for _, q := range s.Questions {
		id := q.ID
		answer := func(choice string) func() {
			return func() {
				if a.Answer != nil {
					a.Answer(id, choice)
				}
			}
		}
		it.Children = append(it.Children, Item{Label: q.Text, Disabled: true})
		for _, w := range q.Warnings {
			it.Children = append(it.Children, Item{Label: w, Disabled: true})
		}
		it.Children = append(it.Children,
			Item{Label: AllowLabel(q), Action: answer(ChoiceAllow)},
			Item{Label: AlwaysLabel(q), Action: answer(ChoiceAlways), Hidden: len(q.Warnings) > 0 && q.Saved == ""},
			Item{Label: DenyLabel(q), Action: answer(ChoiceDeny)},
		)
	}
	return it
}
