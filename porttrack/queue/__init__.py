"""The queue stage: upstream history walked (walk), numbered into a queue file (build, file), team reports
read into it (importer), and entries picked and shown (show)."""
