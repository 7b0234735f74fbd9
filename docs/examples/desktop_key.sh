python manage.py create_api_key --name "u1's desktop" --reach tenant:acme --actor u1
